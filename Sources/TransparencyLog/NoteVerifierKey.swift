public import Crypto

/// A key that verifies Ed25519 signatures of signed notes (c2sp.org/signed-note@v1.0.0), with its name and key ID,
/// and its verifier key (*vkey*) text `<name>+<hex key ID>+<base64(0x01 || public key)>` (section "Verifier keys").
///
/// Only signature type `0x01` (section "Ed25519 signatures") is supported: the spec asks implementations to select
/// only the types their design needs (section "Signature types").
public struct NoteVerifierKey: Ed25519VerifierKey {
    /// Why a key name or a verifier key is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The key name is empty, or holds a Unicode space, a plus (U+002B) or a control character.
        case invalidKeyName
        /// The vkey is not three parts `name+keyid+key` separated by plus signs.
        case malformedVerifierKey
        /// The key ID part is not eight lowercase hex digits.
        case malformedKeyID
        /// The key part is not canonical standard base64, or is empty.
        case malformedKey
        /// The key's signature type byte is not `0x01` (Ed25519).
        case unsupportedSignatureType(UInt8)
        /// The Ed25519 public key is not 32 bytes.
        case wrongKeyLength(Int)
        /// The key ID does not match the one computed from the name and the key.
        case keyIDMismatch(stated: UInt32, computed: UInt32)

        public var description: String {
            switch self {
            case .invalidKeyName:
                "the key name must be non-empty with no spaces, no '+' and no control characters (c2sp.org/signed-note)"
            case .malformedVerifierKey: "a verifier key must be <name>+<8 hex digits>+<base64 key>"
            case .malformedKeyID: "the key ID of a verifier key must be 8 lowercase hex digits"
            case .malformedKey: "the key of a verifier key must be canonical standard base64 of a type byte and a key"
            case .unsupportedSignatureType(let type):
                "signature type 0x\(NoteEncoding.hex32(UInt32(type)).suffix(2)) is not supported here (Ed25519 note keys "
                    + "are 0x01, Ed25519 cosignature keys 0x04)"
            case .wrongKeyLength(let length): "an Ed25519 public key is 32 bytes, not \(length)"
            case .keyIDMismatch(let stated, let computed):
                "the verifier key states key ID \(NoteEncoding.hex32(stated)) but its name and key give "
                    + NoteEncoding.hex32(computed)
            }
        }
    }

    /// The signature type identifier byte of Ed25519 (c2sp.org/signed-note "Signature types").
    public static let ed25519SignatureType: UInt8 = 0x01
    /// The vkey's type byte: ``ed25519SignatureType``.
    public static var vkeyType: UInt8 { ed25519SignatureType }

    /// The key name, as it appears in signature lines.
    public let name: String
    /// The key ID, `SHA-256(name || 0x0A || 0x01 || public key)[:4]` read big-endian.
    public let keyID: UInt32
    /// The Ed25519 public key.
    public let publicKey: Curve25519.Signing.PublicKey

    /// The verifier of `publicKey` under `name`.
    ///
    /// - Throws: ``Failure/invalidKeyName`` when `name` breaks the rules of c2sp.org/signed-note "Format".
    public init(name: String, publicKey: Curve25519.Signing.PublicKey) throws(Failure) {
        guard Self.isValidKeyName(name) else { throw .invalidKeyName }
        self.name = name
        self.publicKey = publicKey
        self.keyID = Self.keyID(name: name, publicKey: Array(publicKey.rawRepresentation))
    }

    /// Reads a verifier key `<name>+<hex key ID>+<base64(0x01 || public key)>` (c2sp.org/signed-note "Verifier
    /// keys"). The key ID must be the one computed from the name and the key (section "Ed25519 signatures").
    ///
    /// - Throws: a ``Failure`` naming the first rule the text breaks.
    public init(parsing vkey: String) throws(Failure) {
        let parsed = try Self.parseEd25519(vkey, type: Self.ed25519SignatureType)
        try self.init(name: parsed.name, publicKey: parsed.publicKey)
    }

    /// `SHA-256(name || 0x0A || 0x01 || publicKey)[:4]`, big-endian (c2sp.org/signed-note "Ed25519 signatures").
    public static func keyID(name: String, publicKey: [UInt8]) -> UInt32 {
        keyID(name: name, type: ed25519SignatureType, publicKey: publicKey)
    }

    /// `SHA-256(name || 0x0A || type || publicKey)[:4]`, big-endian: the key ID of every Ed25519 key type of the
    /// C2SP specs (0x01 note signatures, 0x04 cosignatures), which differ only in the type byte.
    static func keyID(name: String, type: UInt8, publicKey: [UInt8]) -> UInt32 {
        var hasher = SHA256()
        hasher.update(data: Array(name.utf8) + [0x0A, type])
        hasher.update(data: publicKey)
        return NoteEncoding.uint32(Array(hasher.finalize())[...])
    }

    /// Reads a vkey `<name>+<hex key ID>+<base64(type || 32-byte Ed25519 key)>` of the given type byte; the stated
    /// key ID must be the one computed from the name, the type and the key.
    static func parseEd25519(
        _ vkey: String,
        type: UInt8
    ) throws(Failure) -> (name: String, publicKey: Curve25519.Signing.PublicKey) {
        let parts = try split(vkey)
        guard parts.type == type else { throw .unsupportedSignatureType(parts.type) }
        guard parts.key.count == 32, let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: parts.key)
        else { throw .wrongKeyLength(parts.key.count) }
        guard isValidKeyName(parts.name) else { throw .invalidKeyName }
        let computed = keyID(name: parts.name, type: type, publicKey: parts.key)
        guard computed == parts.keyID else { throw .keyIDMismatch(stated: parts.keyID, computed: computed) }
        return (parts.name, publicKey)
    }

    /// `<name>+<hex key ID>+<base64(type || public key)>`.
    static func render(name: String, keyID: UInt32, type: UInt8, publicKey: [UInt8]) -> String {
        "\(name)+\(NoteEncoding.hex32(keyID))+\(NoteEncoding.base64([type] + publicKey))"
    }

    /// Whether `name` may name a key: non-empty, no Unicode space, no plus (c2sp.org/signed-note "Format"), and no
    /// control character (a note may hold none but newline, which is a space anyway).
    public static func isValidKeyName(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy { !$0.properties.isWhitespace && $0 != "+" && $0.value >= 0x20 }
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        signature.count == 64 && publicKey.isValidSignature(signature, for: message)
    }
}
