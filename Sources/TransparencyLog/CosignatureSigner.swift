public import Crypto

/// A witness's Ed25519 cosigning key with its name (c2sp.org/tlog-cosignature). The spec defines no text form of
/// private keys, so the key is held as the caller stores it.
public struct CosignatureSigner: Sendable {
    /// The cosigner name written in its lines.
    public let name: String
    /// The Ed25519 private key.
    public let privateKey: Curve25519.Signing.PrivateKey
    /// The matching verifier key (name, key ID with type `0x04`, public key).
    public let verifierKey: CosignatureVerifierKey

    /// A cosigner named `name` with `privateKey`.
    ///
    /// - Throws: ``NoteVerifierKey/Failure/invalidKeyName`` when `name` breaks the rules of c2sp.org/signed-note.
    public init(name: String, privateKey: Curve25519.Signing.PrivateKey) throws(NoteVerifierKey.Failure) {
        self.name = name
        self.privateKey = privateKey
        self.verifierKey = try CosignatureVerifierKey(name: name, publicKey: privateKey.publicKey)
    }

    /// The cosignature line's content for a checkpoint note's `text` at `timestamp` (POSIX seconds): this key's name
    /// and key ID, and `timestamp || Ed25519(cosignature/v1 message)`.
    ///
    /// - Throws: ``Cosignature/Failure/timestampTooLarge(_:)`` past 2^63 - 1, ``Cosignature/Failure/signingFailed``.
    public func cosign(text: String, timestamp: UInt64) throws(Cosignature.Failure) -> SignedNote.Signature {
        guard timestamp <= Cosignature.maxTimestamp else { throw .timestampTooLarge(timestamp) }
        let signature: [UInt8]
        do {
            signature = Array(try privateKey.signature(for: Cosignature.message(text: text, timestamp: timestamp)))
        } catch {
            throw .signingFailed
        }
        do {
            return try SignedNote.Signature(
                keyName: name,
                keyID: verifierKey.keyID,
                signature: Cosignature.join(timestamp: timestamp, signature: signature)
            )
        } catch {
            // The name was checked at init and the signature is not empty.
            throw .signingFailed
        }
    }
}
