import AuditChain
public import Crypto
import Foundation

/// The public keys a verifier pins (`auditctl keys export-public`): JSON
/// `{"keys":[{"keyId":"...","publicKey":"..."}],"logId":"...","v":1}`, or a bare 64-digit hex key per line.
public enum PublicKeyFile: Sendable {
    /// Renders the file.
    public static func render(logId: [UInt8], keys: [Curve25519.Signing.PublicKey]) -> [UInt8] {
        JSONValue.object([
            "v": 1,
            "logId": .string(Hex.encode(logId)),
            "keys": .array(
                keys.map {
                    .object([
                        "keyId": .string(KeyID.signing($0).hex),
                        "publicKey": .string(Hex.encode($0.rawRepresentation)),
                    ])
                }
            ),
        ]).canonicalBytes + [0x0a]
    }

    /// Parses the file.
    /// - Throws: ``KeyFileError`` if it holds no valid key.
    public static func parse(_ bytes: [UInt8]) throws -> [Curve25519.Signing.PublicKey] {
        if let members = (try? JSONValue(parsing: bytes))?.objectValue, case .array(let keys)? = members["keys"] {
            return try keys.map { key in
                guard let raw = key.objectValue?["publicKey"]?.stringValue.flatMap(Hex.decode) else {
                    throw KeyFileError("public key file: a key has no \"publicKey\"")
                }
                return try publicKey(raw)
            }
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
        let keys = try lines.map { line -> Curve25519.Signing.PublicKey in
            guard let raw = Hex.decode(line.trimmingCharacters(in: .whitespaces)) else {
                throw KeyFileError("public key file: expected JSON or 64 hex digits per line")
            }
            return try publicKey(raw)
        }
        guard !keys.isEmpty else { throw KeyFileError("public key file holds no key") }
        return keys
    }

    /// An Ed25519 public key from 32 raw bytes.
    public static func publicKey(_ raw: [UInt8]) throws -> Curve25519.Signing.PublicKey {
        do {
            return try Curve25519.Signing.PublicKey(rawRepresentation: raw)
        } catch {
            throw KeyFileError("not a 32-byte Ed25519 public key")
        }
    }
}
