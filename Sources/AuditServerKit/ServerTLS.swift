import AuditSupport
import Foundation
public import Logging
import NIOConcurrencyHelpers
public import NIOSSL

/// A server's TLS credentials read from PEM files, re-read by ``reload(logger:)`` (the collector does on SIGHUP):
/// new connections take the context in effect when they are accepted; a file that fails to load keeps the old one.
public final class ServerTLS: Sendable {
    /// Why the TLS files were refused.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong and what to do (never the key's content).
        public var description: String
    }

    /// The certificate chain file (PEM, leaf first).
    public let certificateFile: String
    /// The private key file (PEM; refused if group or others can read it).
    public let keyFile: String
    /// A CA bundle (PEM) client certificates must chain to; nil for no client certificates (no mTLS).
    public let clientCAFile: String?
    private let current: NIOLockedValueBox<NIOSSLContext>

    /// Reads the files and builds the first context.
    /// - Throws: ``Failure`` for an unreadable, unsafe or invalid file.
    public init(certificateFile: String, keyFile: String, clientCAFile: String? = nil) throws(Failure) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCAFile = clientCAFile
        current = NIOLockedValueBox(
            try Self.load(certificateFile: certificateFile, keyFile: keyFile, clientCAFile: clientCAFile)
        )
    }

    /// The context new connections use.
    public var context: NIOSSLContext { current.withLockedValue { $0 } }

    /// Re-reads the files; on failure keeps the context in effect and logs why at error level.
    /// - Returns: whether the new files were taken.
    @discardableResult
    public func reload(logger: Logger) -> Bool {
        do {
            let context = try Self.load(certificateFile: certificateFile, keyFile: keyFile, clientCAFile: clientCAFile)
            current.withLockedValue { $0 = context }
            logger.notice("reloaded the TLS certificate and key", metadata: ["certificate": "\(certificateFile)"])
            return true
        } catch {
            logger.error(
                "TLS reload failed; keeping the certificate and key in use",
                metadata: ["error": "\(error.description)"]
            )
            return false
        }
    }

    /// Builds a server context from the files.
    static func load(certificateFile: String, keyFile: String, clientCAFile: String?) throws(Failure) -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw Failure(description: "TLS certificate file \(certificateFile): cannot read a PEM certificate")
        }
        guard !chain.isEmpty else {
            throw Failure(description: "TLS certificate file \(certificateFile) holds no certificate")
        }
        let keyBytes: [UInt8]
        do {
            keyBytes = try SecretFile.read(keyFile, what: "TLS key file", maxBytes: 1 << 20)
        } catch {
            throw Failure(description: error.description)
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw Failure(description: "TLS key file \(keyFile) does not hold a PEM private key")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = .tlsv12
        if let clientCAFile {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(clientCAFile)
            } catch {
                throw Failure(description: "client CA file \(clientCAFile): cannot read PEM certificates")
            }
            guard !roots.isEmpty else { throw Failure(description: "client CA file \(clientCAFile) is empty") }
            configuration.trustRoots = .certificates(roots)
            // Client certificates name devices, not hosts: the chain is verified, the host name is not.
            configuration.certificateVerification = .noHostnameVerification
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw Failure(
                description: "TLS certificate \(certificateFile) and key \(keyFile) do not make a TLS context: "
                    + "\(error) (does the key match the certificate?)"
            )
        }
    }
}
