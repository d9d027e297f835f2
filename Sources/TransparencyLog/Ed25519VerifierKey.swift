public import Crypto

/// What a signed-note verifier key (type `0x01`) and a cosignature verifier key (type `0x04`) share: a name, a key
/// ID derived from the name, the type byte and the key, and the vkey text `<name>+<hex key ID>+<base64(type ||
/// public key)>` (c2sp.org/signed-note "Verifier keys"; c2sp.org/tlog-cosignature "Format"). Equality, hashing and
/// the vkey are defined once here.
public protocol Ed25519VerifierKey: Sendable, Hashable, CustomStringConvertible {
    /// The type byte of the vkey and of the key ID.
    static var vkeyType: UInt8 { get }
    /// The key name.
    var name: String { get }
    /// `SHA-256(name || 0x0A || type || public key)[:4]` read big-endian.
    var keyID: UInt32 { get }
    /// The Ed25519 public key.
    var publicKey: Curve25519.Signing.PublicKey { get }
}

extension Ed25519VerifierKey {
    /// The vkey text, `<name>+<hex key ID>+<base64(type || public key)>`.
    public var vkey: String {
        NoteVerifierKey.render(name: name, keyID: keyID, type: Self.vkeyType, publicKey: publicKeyBytes)
    }

    public var description: String { vkey }

    /// The 32-byte Ed25519 public key (RFC 8032 encoding).
    public var publicKeyBytes: [UInt8] { Array(publicKey.rawRepresentation) }

    /// Equal names (byte for byte, with no Unicode normalization), key IDs and public keys.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name.utf8.elementsEqual(rhs.name.utf8) && lhs.keyID == rhs.keyID && lhs.publicKeyBytes == rhs.publicKeyBytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Array(name.utf8))
        hasher.combine(keyID)
        hasher.combine(publicKeyBytes)
    }
}
