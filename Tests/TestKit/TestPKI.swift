import Foundation

/// A test PKI made with the `openssl` command line in a temporary directory: a CA, a server certificate for
/// 127.0.0.1 and localhost, an expired one, one for another host name, one from another CA, and a client
/// certificate. Keys are P-256, mode 0600.
package struct TestPKI: Sendable {
    /// Why `openssl` failed.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// The directory holding every file.
    package let path: String
    private let directory: TemporaryDirectory

    /// The test CA's certificate.
    package var caCertificate: String { path + "/ca.pem" }
    /// Another CA's certificate (trusted by nobody but the tests that say so).
    package var otherCACertificate: String { path + "/other-ca.pem" }
    /// A certificate (and key) for 127.0.0.1 and localhost from the test CA.
    package var server: (certificate: String, key: String) { (path + "/server.pem", path + "/server.key") }
    /// The same names, from the test CA, expired yesterday.
    package var expired: (certificate: String, key: String) { (path + "/expired.pem", path + "/expired.key") }
    /// A certificate from the test CA for another host name only (audit.example.org).
    package var wrongHost: (certificate: String, key: String) { (path + "/wronghost.pem", path + "/wronghost.key") }
    /// A certificate for 127.0.0.1 and localhost from the other CA.
    package var otherCA: (certificate: String, key: String) { (path + "/otherserver.pem", path + "/otherserver.key") }
    /// A client certificate (clientAuth) from the test CA.
    package var client: (certificate: String, key: String) { (path + "/client.pem", path + "/client.key") }

    /// One PKI for the whole test process, made at first use: every `openssl` run is a child process, and the
    /// suite keeps child processes few (Foundation's `Process.run()` has crashed the suite when many ran beside many
    /// open sockets). Tests that change a file make their own.
    package static let shared = Result {
        let pki = try TestPKI()
        sharedPath = pki.path
        // A static is never deinitialised: its directory goes when the process exits.
        atexit { if let path = TestPKI.sharedPath { try? FileManager.default.removeItem(atPath: path) } }
        return pki
    }
    nonisolated(unsafe) private static var sharedPath: String?

    /// Makes every certificate.
    /// - Throws: ``Failure`` if `openssl` fails.
    package init() throws {
        directory = try TemporaryDirectory(prefix: "pki")
        path = directory.path
        try makeCA("ca", name: "Audit Test CA")
        try makeCA("other-ca", name: "Other Test CA")
        let local = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
        try issue("server", by: "ca", extensions: local, days: "2")
        try issue("expired", by: "ca", extensions: local, days: "-1")
        try issue(
            "wronghost",
            by: "ca",
            extensions: "subjectAltName=DNS:audit.example.org\nextendedKeyUsage=serverAuth\n",
            days: "2"
        )
        try issue("otherserver", by: "other-ca", extensions: local, days: "2")
        try issue("client", by: "ca", extensions: "extendedKeyUsage=clientAuth\n", days: "2")
    }

    /// The RFC 7469 pin-sha256 of a PEM certificate's key, computed with the `openssl` command line as
    /// docs/PROTOCOL.md section 1.1 tells operators to (`x509 -pubkey`, `pkey -pubin -outform der`, `dgst -sha256
    /// -binary`, base64).
    package func pin(of certificate: String) throws -> String {
        let publicKey = try openssl(["x509", "-in", certificate, "-pubkey", "-noout"])
        let der = try openssl(["pkey", "-pubin", "-outform", "der"], input: publicKey)
        return try openssl(["dgst", "-sha256", "-binary"], input: der).base64EncodedString()
    }

    /// The subject of the issuer of the certificate a TLS server on `127.0.0.1:port` presents to a new connection
    /// (`openssl s_client`, which verifies nothing); nil if no handshake got that far.
    package func presentedIssuer(port: Int) -> String? {
        guard
            let chain = try? openssl(
                ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"],
                input: Data()
            ),
            let issuer = try? openssl(["x509", "-noout", "-issuer"], input: chain)
        else { return nil }
        return String(decoding: issuer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func makeCA(_ name: String, name subject: String) throws {
        _ = try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "\(path)/\(name).key", "-out", "\(path)/\(name).pem", "-days", "3", "-subj", "/CN=\(subject)",
        ])
        try setPrivate("\(path)/\(name).key")
    }

    private func issue(_ name: String, by ca: String, extensions: String, days: String) throws {
        let extensionsFile = "\(path)/\(name).ext"
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: extensionsFile))
        _ = try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(path)/\(name).key",
            "-out", "\(path)/\(name).csr", "-subj", "/CN=\(name)",
        ])
        try setPrivate("\(path)/\(name).key")
        _ = try openssl([
            "x509", "-req", "-in", "\(path)/\(name).csr", "-CA", "\(path)/\(ca).pem", "-CAkey", "\(path)/\(ca).key",
            "-CAcreateserial", "-out", "\(path)/\(name).pem", "-days", days, "-extfile", extensionsFile,
        ])
    }

    private func setPrivate(_ file: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }

    /// Runs `openssl` with `arguments`; returns its standard output.
    private func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        let result = try ChildProcess.run(
            "/usr/bin/env",
            ["openssl"] + arguments,
            environment: ProcessInfo.processInfo.environment,
            stdin: input,
            timeout: 60
        )
        guard result.status == 0, !result.signaled else {
            throw Failure(
                description: "openssl \(arguments.joined(separator: " ")) failed: "
                    + String(decoding: result.stderr, as: UTF8.self)
            )
        }
        return result.stdout
    }
}
