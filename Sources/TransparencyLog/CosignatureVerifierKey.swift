public import Crypto

/// A witness's Ed25519 cosigning key as a verifier sees it (c2sp.org/tlog-cosignature "Format"): its name, its key ID
/// `SHA-256(name || 0x0A || 0x04 || public key)[:4]`, and its vkey `<name>+<hex key ID>+<base64(0x04 || public key)>`
/// (the signed-note vkey form with the cosignature type byte).
///
/// ``verify(_:)`` finds this key's cosignature lines on a checkpoint note and checks them.
public struct CosignatureVerifierKey: Ed25519VerifierKey {
    /// The signature type byte of Ed25519 cosignatures, `cosignature/v1` (c2sp.org/tlog-cosignature "Format").
    public static let signatureType: UInt8 = 0x04
    /// The vkey's type byte: ``signatureType``.
    public static var vkeyType: UInt8 { signatureType }

    /// The key name written in cosignature lines.
    public let name: String
    /// The key ID, `SHA-256(name || 0x0A || 0x04 || public key)[:4]` read big-endian.
    public let keyID: UInt32
    /// The Ed25519 public key.
    public let publicKey: Curve25519.Signing.PublicKey

    /// The cosignature verifier of `publicKey` under `name`.
    ///
    /// - Throws: ``NoteVerifierKey/Failure/invalidKeyName`` when `name` breaks the rules of c2sp.org/signed-note.
    public init(name: String, publicKey: Curve25519.Signing.PublicKey) throws(NoteVerifierKey.Failure) {
        guard NoteVerifierKey.isValidKeyName(name) else { throw .invalidKeyName }
        self.name = name
        self.publicKey = publicKey
        self.keyID = Self.keyID(name: name, publicKey: Array(publicKey.rawRepresentation))
    }

    /// Reads a vkey `<name>+<hex key ID>+<base64(0x04 || public key)>`. The key ID must be the one computed from the
    /// name and the key.
    ///
    /// - Throws: a ``NoteVerifierKey/Failure`` naming the first rule the text breaks (a type byte other than `0x04`
    ///   is ``NoteVerifierKey/Failure/unsupportedSignatureType(_:)``).
    public init(parsing vkey: String) throws(NoteVerifierKey.Failure) {
        let parsed = try NoteVerifierKey.parseEd25519(vkey, type: Self.signatureType)
        try self.init(name: parsed.name, publicKey: parsed.publicKey)
    }

    /// `SHA-256(name || 0x0A || 0x04 || publicKey)[:4]`, big-endian (c2sp.org/tlog-cosignature "Format").
    public static func keyID(name: String, publicKey: [UInt8]) -> UInt32 {
        NoteVerifierKey.keyID(name: name, type: signatureType, publicKey: publicKey)
    }

    /// Whether `signature` is a line of this key: the same name, byte for byte, and the same key ID.
    public func matches(_ signature: SignedNote.Signature) -> Bool {
        signature.keyID == keyID && signature.keyName.utf8.elementsEqual(name.utf8)
    }

    /// This key's cosignatures on `note`, checked: the timestamps of its lines, in order, or an empty array when the
    /// note holds none (lines of other keys are ignored, as c2sp.org/signed-note asks).
    ///
    /// - Throws: ``Cosignature/Failure`` when a line with this key's name and key ID is malformed or does not verify:
    ///   a forged or corrupted cosignature, which a verifier must refuse rather than skip.
    public func verify(_ note: SignedNote) throws(Cosignature.Failure) -> [UInt64] {
        var timestamps: [UInt64] = []
        for signature in note.signatures where matches(signature) {
            let (timestamp, bytes) = try Cosignature.split(signature.signature)
            let message = Cosignature.message(text: note.text, timestamp: timestamp)
            guard publicKey.isValidSignature(bytes, for: message) else {
                throw .badCosignature(keyName: name, keyID: keyID)
            }
            timestamps.append(timestamp)
        }
        return timestamps
    }
}

extension NoteVerifierKey {
    /// The parts of a vkey `<name>+<8 hex key ID>+<base64(type || key)>`, the type byte apart; nothing checked but
    /// the form, the name and the non-empty key (the caller checks the type, the key and the key ID).
    static func split(_ vkey: String) throws(Failure) -> (name: String, keyID: UInt32, type: UInt8, key: [UInt8]) {
        let bytes = Array(vkey.utf8)
        // The name cannot hold a plus, so the first plus ends it; the base64 key may hold plus signs of its own.
        guard let firstPlus = bytes.firstIndex(of: UInt8(ascii: "+")), bytes.count >= firstPlus + 10,
            bytes[firstPlus + 9] == UInt8(ascii: "+")
        else { throw .malformedVerifierKey }
        let name = String(decoding: bytes[..<firstPlus], as: UTF8.self)
        guard isValidKeyName(name) else { throw .invalidKeyName }
        guard let stated = NoteEncoding.hex32(parsing: bytes[(firstPlus + 1)..<(firstPlus + 9)]) else {
            throw .malformedKeyID
        }
        guard let key = NoteEncoding.base64Decode(bytes[(firstPlus + 10)...]), let type = key.first else {
            throw .malformedKey
        }
        return (name, stated, type, Array(key.dropFirst()))
    }
}
