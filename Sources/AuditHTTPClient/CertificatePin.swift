import Crypto
import Foundation
public import NIOSSL

/// A pin of the collector's key, as RFC 7469's `pin-sha256`: the SHA-256 of the DER encoding of a certificate's
/// SubjectPublicKeyInfo, written in standard base64 (44 characters with the padding). It names a key, not a
/// certificate, so a certificate renewed for the same key keeps its pin.
///
/// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary |
/// base64` computes it from a PEM certificate (docs/PROTOCOL.md section 1.1).
public struct CertificatePin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the SHA-256 digest.
    public let digest: [UInt8]

    /// Parses a pin: exactly the standard base64 (RFC 4648 section 4, padded) of 32 bytes.
    /// - Throws: ``SyncTLS/Failure`` naming the text and how to compute a pin.
    public init(base64 text: String) throws(SyncTLS.Failure) {
        guard text.utf8.count == 44, let data = Data(base64Encoded: text), data.count == SHA256.byteCount,
            data.base64EncodedString() == text
        else {
            throw SyncTLS.Failure(
                description: "\"\(text.prefix(60))\" is not a pin-sha256: expected the base64 of a SHA-256 "
                    + "(44 characters) of the collector's public key, e.g. from `openssl x509 -in cert.pem -pubkey "
                    + "-noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`"
            )
        }
        digest = Array(data)
    }

    /// The pin of a DER SubjectPublicKeyInfo.
    public init(subjectPublicKeyInfo der: [UInt8]) {
        digest = Array(SHA256.hash(data: der))
    }

    /// The pin of a certificate's public key.
    /// - Throws: when the certificate's key cannot be read or encoded.
    public init(certificate: NIOSSLCertificate) throws {
        self.init(subjectPublicKeyInfo: try certificate.extractPublicKey().toSPKIBytes())
    }

    /// The pin in base64, as configured.
    public var description: String { Data(digest).base64EncodedString() }
}
