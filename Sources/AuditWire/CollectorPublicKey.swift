public import AuditChain
public import Crypto
import Foundation

/// The collector's receipt key as published at `GET /v1/collector/key` (docs/PROTOCOL.md section 3):
/// `{"keyId":"<32 hex>","publicKey":"<64 hex>","v":1}`. An operator pins it in a file of that form (the endpoint's
/// answer saved as is) or of 64 hex digits on one line (`--collector-key FILE`).
public enum CollectorPublicKey: Sendable {
    /// The JSON form.
    public static func json(_ key: Curve25519.Signing.PublicKey) -> JSONValue {
        .object([
            "v": .integer(SyncWire.version),
            "keyId": .string(KeyID.signing(key).hex),
            "publicKey": .string(Hex.encode(key.rawRepresentation)),
        ])
    }

    /// Reads the JSON form or a line of 64 hex digits. A `keyId`, when present, must be the key's id.
    /// - Throws: ``KeyFileError`` naming what is wrong.
    public static func parse(_ bytes: [UInt8]) throws -> Curve25519.Signing.PublicKey {
        if let members = (try? JSONValue(parsing: bytes))?.objectValue {
            guard let text = members["publicKey"]?.stringValue, let raw = Hex.decode(text) else {
                throw KeyFileError("collector key: member \"publicKey\" must be 64 hex digits")
            }
            let key = try PublicKeyFile.publicKey(raw)
            if let id = members["keyId"], id.stringValue != KeyID.signing(key).hex {
                throw KeyFileError("collector key: \"keyId\" is not the id of \"publicKey\"")
            }
            return key
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 64, let raw = Hex.decode(text) else {
            throw KeyFileError("collector key: expected the JSON of GET /v1/collector/key or 64 hex digits")
        }
        return try PublicKeyFile.publicKey(raw)
    }
}
