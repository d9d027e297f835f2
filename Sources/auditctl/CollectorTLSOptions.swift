import ArgumentParser
import AuditHTTPClient

/// The TLS options of the commands that ask a collector (`prove`, `verify-consistency --collector`), as the agent
/// has them: whom an `https://` collector's certificate must chain to, the pins its key must match, and the client
/// certificate for a collector that requires mTLS.
struct CollectorTLSOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "CA bundle (PEM) an https collector's certificate must chain to (default: system roots)."
    )
    var caFile: String?
    @Option(
        name: .long,
        help: """
            Pin of the collector's key: base64 SHA-256 of its certificate's DER SubjectPublicKeyInfo (RFC 7469 \
            pin-sha256), checked besides the CA; repeatable, one must match.
            """
    )
    var pinSha256: [String] = []
    @Option(name: .long, help: "Client certificate chain (PEM) for a collector that requires mTLS.")
    var tlsClientCert: String?
    @Option(name: .long, help: "Its private key (PEM, mode 0600; refused if group/others can read it).")
    var tlsClientKey: String?

    /// The settings; nil when no option was given (the system's roots, no pin, no client certificate).
    /// - Throws: ``CLIError`` for a malformed pin or an unreadable, unsafe or invalid file.
    func make() throws -> SyncTLS? {
        guard caFile != nil || !pinSha256.isEmpty || tlsClientCert != nil || tlsClientKey != nil else { return nil }
        do {
            let pins = try pinSha256.map { text throws(SyncTLS.Failure) in try CertificatePin(base64: text) }
            return try SyncTLS(
                caFile: caFile,
                clientCertificateFile: tlsClientCert,
                clientKeyFile: tlsClientKey,
                pins: Set(pins)
            )
        } catch {
            throw CLIError("\(error)")
        }
    }
}
