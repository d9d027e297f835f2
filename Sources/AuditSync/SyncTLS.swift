import AuditWire
import Foundation
public import NIOSSL

/// The agent's TLS settings for an `https://` backend: whom to trust and, for mTLS, which client certificate to
/// present. The default trusts the system's roots and presents none.
public struct SyncTLS: Sendable {
    /// Why a TLS file was refused.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong and what to do (never a key's content).
        public var description: String
    }

    /// The TLS configuration every request to the backend uses.
    public let configuration: TLSConfiguration

    /// Trusts the system's roots, presents no client certificate.
    public init() {
        configuration = TLSConfiguration.makeClientConfiguration()
    }

    /// Reads the files.
    /// - Parameters:
    ///   - caFile: a CA bundle (PEM) trusted instead of the system's roots; nil for the system's roots.
    ///   - clientCertificateFile: the client certificate chain (PEM) for mTLS; with `clientKeyFile`.
    ///   - clientKeyFile: its private key (PEM; refused if group or others can read it).
    /// - Throws: ``Failure`` for an unreadable, unsafe or invalid file, or half a client certificate.
    public init(caFile: String?, clientCertificateFile: String?, clientKeyFile: String?) throws(Failure) {
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
    }

    /// Reads a private key file, refusing one that group or others can read.
    static func readKey(_ path: String) throws(Failure) -> NIOSSLPrivateKey {
        let bytes: [UInt8]
        do {
            guard let read = try PrivateFile.read(path, maxBytes: 1 << 20) else {
                throw Failure(description: "cannot open TLS client key file \(path): no such file")
            }
            bytes = read
        } catch let error as Failure {
            throw error
        } catch PrivateFile.Failure.unsafe(let mode) {
            throw Failure(description: "TLS client key file \(path) " + PrivateFile.unsafeAdvice(path, mode: mode))
        } catch {
            throw Failure(description: "cannot read TLS client key file \(path): \(error)")
        }
        do {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            throw Failure(description: "TLS client key file \(path) does not hold a PEM private key")
        }
    }
}
