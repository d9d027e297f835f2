public import Crypto

/// An Ed25519 private key with the key name it signs notes under (c2sp.org/signed-note@v1.0.0 "Ed25519
/// signatures"). The spec defines no text encoding of signing keys, so there is none here: the private key is held
/// as the caller stores it.
public struct NoteSigner: Sendable {
    /// The key name written in signature lines.
    public let name: String
    /// The Ed25519 private key.
    public let privateKey: Curve25519.Signing.PrivateKey
    /// The matching verifier key (name, key ID, public key).
    public let verifierKey: NoteVerifierKey

    /// A signer of notes as `name` with `privateKey`.
    ///
    /// - Throws: ``NoteVerifierKey/Failure/invalidKeyName`` when `name` breaks the rules of c2sp.org/signed-note.
    public init(name: String, privateKey: Curve25519.Signing.PrivateKey) throws(NoteVerifierKey.Failure) {
        self.name = name
        self.privateKey = privateKey
        self.verifierKey = try NoteVerifierKey(name: name, publicKey: privateKey.publicKey)
    }

    /// The signature line's content for `text`: this key's name and ID, and the Ed25519 signature of the text.
    ///
    /// - Throws: ``SignedNote/Failure/signingFailed`` when the Ed25519 implementation fails.
    public func signature(for text: String) throws(SignedNote.Failure) -> SignedNote.Signature {
        let signature: [UInt8]
        do {
            signature = Array(try privateKey.signature(for: Array(text.utf8)))
        } catch {
            throw .signingFailed
        }
        return try SignedNote.Signature(keyName: name, keyID: verifierKey.keyID, signature: signature)
    }
}

extension SignedNote {
    /// A note of `text` signed by each of `signers`, in order.
    ///
    /// - Throws: ``Failure/textNotNewlineTerminated`` or ``Failure/controlCharacter`` for a text the format cannot
    ///   carry, ``Failure/noSignatures`` when `signers` is empty, ``Failure/signingFailed``.
    public init(signing text: String, with signers: [NoteSigner]) throws(Failure) {
        try Self.checkText(text)
        var signatures: [Signature] = []
        for signer in signers { signatures.append(try signer.signature(for: text)) }
        try self.init(text: text, signatures: signatures)
    }

    /// The known keys that signed the note, in the order of their first signature.
    ///
    /// Follows c2sp.org/signed-note "Signatures": a signature whose key name and key ID are not both those of a key
    /// in `keys` is ignored; one that matches a known key must verify, or the whole note is refused; at least one
    /// must verify.
    ///
    /// - Throws: ``Failure/badSignature(keyName:keyID:)``, ``Failure/noKnownSignature``, or
    ///   ``Failure/ambiguousKeys(keyName:keyID:)`` when `keys` holds two different keys with the same name and ID.
    public func verify(keys: [NoteVerifierKey]) throws(Failure) -> [NoteVerifierKey] {
        var known: [KeyHandle: NoteVerifierKey] = [:]
        for key in keys {
            let handle = KeyHandle(name: Array(key.name.utf8), keyID: key.keyID)
            if let other = known[handle], other != key { throw .ambiguousKeys(keyName: key.name, keyID: key.keyID) }
            known[handle] = key
        }
        let message = Array(text.utf8)
        var verified: [NoteVerifierKey] = []
        for signature in signatures {
            guard let key = known[KeyHandle(name: Array(signature.keyName.utf8), keyID: signature.keyID)] else {
                continue
            }
            guard key.isValidSignature(signature.signature, for: message) else {
                throw .badSignature(keyName: signature.keyName, keyID: signature.keyID)
            }
            if !verified.contains(key) { verified.append(key) }
        }
        guard !verified.isEmpty else { throw .noKnownSignature }
        return verified
    }

    /// What identifies a key in a signature line: its name (as bytes: no Unicode normalization) and key ID together.
    struct KeyHandle: Hashable {
        let name: [UInt8]
        let keyID: UInt32
    }
}
