import AuditSupport
import Foundation
public import NIOSSL

/// The agent's TLS settings for an `https://` backend: whom to trust, which keys the collector's certificate may
/// have (pins), and, for mTLS, which client certificate to present. The default trusts the system's roots, pins
/// nothing and presents none.
public struct SyncTLS: Sendable {
    /// Why a TLS file was refused.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong and what to do (never a key's content).
        public var description: String
    }

    /// The TLS configuration every request to the backend uses.
    public let configuration: TLSConfiguration

    /// The pins the collector's certificate must match, one of them (``CertificatePin``); empty for none. Pins
    /// narrow the trust of ``configuration``, they never replace it: the chain and the host name are verified
    /// first.
    public let pins: Set<CertificatePin>

    /// The context of pinned connections, built once from ``configuration`` (loading the trust roots); nil without
    /// pins (AsyncHTTPClient builds and caches its own).
    package let pinnedContext: NIOSSLContext?

    /// Trusts the system's roots, pins nothing, presents no client certificate.
    public init() {
        configuration = TLSConfiguration.makeClientConfiguration()
        pins = []
        pinnedContext = nil
    }

    /// Reads the files.
    /// - Parameters:
    ///   - caFile: a CA bundle (PEM) trusted instead of the system's roots; nil for the system's roots.
    ///   - clientCertificateFile: the client certificate chain (PEM) for mTLS; with `clientKeyFile`.
    ///   - clientKeyFile: its private key (PEM; refused if group or others can read it).
    ///   - pins: pins the collector's certificate must match one of (``pins``); empty for none.
    /// - Throws: ``Failure`` for an unreadable, unsafe or invalid file, or half a client certificate.
    public init(
        caFile: String?,
        clientCertificateFile: String?,
        clientKeyFile: String?,
        pins: Set<CertificatePin> = []
    ) throws(Failure) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caFile {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw Failure(description: "CA file \(caFile): cannot read PEM certificates")
            }
            guard !roots.isEmpty else { throw Failure(description: "CA file \(caFile) holds no certificate") }
            configuration.trustRoots = .certificates(roots)
        }
        switch (clientCertificateFile, clientKeyFile) {
        case (nil, nil):
            break
        case (let certificateFile?, let keyFile?):
            let chain: [NIOSSLCertificate]
            do {
                chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
            } catch {
                throw Failure(description: "TLS client certificate file \(certificateFile): cannot read PEM")
            }
            guard !chain.isEmpty else {
                throw Failure(description: "TLS client certificate file \(certificateFile) holds no certificate")
            }
            configuration.certificateChain = chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(try Self.readKey(keyFile))
        default:
            throw Failure(description: "tlsClientCert and tlsClientKey go together: give both or neither")
        }
        self.configuration = configuration
        self.pins = pins
        if pins.isEmpty {
            pinnedContext = nil
        } else {
            do {
                pinnedContext = try NIOSSLContext(configuration: configuration)
            } catch {
                throw Failure(description: "cannot set up TLS with these settings: \(error)")
            }
        }
    }

    /// Reads a private key file, refusing one that group or others can read.
    static func readKey(_ path: String) throws(Failure) -> NIOSSLPrivateKey {
        let bytes: [UInt8]
        do {
            bytes = try SecretFile.read(path, what: "TLS client key file", maxBytes: 1 << 20)
        } catch {
            throw Failure(description: error.description)
        }
        do {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            throw Failure(description: "TLS client key file \(path) does not hold a PEM private key")
        }
    }
}
