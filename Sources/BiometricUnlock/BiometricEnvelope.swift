import Crypto

/// K_bio derivation and the AES-GCM envelope that keeps the session secret while biometric unlock is enabled.
///
/// - K_bio = HKDF-SHA256(IKM: session proof, salt: 32 fresh random bytes, info: `biometric-unlock`, 32 bytes).
///   The salt is drawn anew at every enrollment and then discarded: K_bio is stored (bound to the biometric set),
///   never re-derived, so the salt only has to make each enrollment's key independent of the previous ones, also
///   when the session proof is the same.
/// - The envelope is AES-256-GCM(K_bio, session secret) with a fresh 12-byte nonce and the associated data
///   ``associatedData(userId:deviceId:)``, so an envelope cannot be moved to another user or device.
/// - Serialized: version (1 byte, 1) ‖ nonce (12) ‖ ciphertext ‖ tag (16).
public struct BiometricEnvelope: Sendable, Hashable {
    /// The layout version byte.
    public static let formatVersion: UInt8 = 1
    /// Bytes of K_bio.
    public static let keyByteCount = 32
    /// Bytes of the HKDF salt.
    public static let saltByteCount = 32
    /// Bytes of the AES-GCM nonce.
    public static let nonceByteCount = 12
    /// Bytes of the AES-GCM tag.
    public static let tagByteCount = 16

    /// The AES-GCM nonce.
    public var nonce: [UInt8]
    /// The encrypted session secret.
    public var ciphertext: [UInt8]
    /// The AES-GCM authentication tag.
    public var tag: [UInt8]

    /// The bytes kept in the key store.
    public var serialized: [UInt8] { [Self.formatVersion] + nonce + ciphertext + tag }

    /// Parses serialized bytes.
    /// - Throws: ``BiometricUnlockError`` `ERR-107-001` when the layout is wrong.
    public init(serialized bytes: [UInt8]) throws(BiometricUnlockError) {
        guard bytes.count >= 1 + Self.nonceByteCount + Self.tagByteCount, bytes[0] == Self.formatVersion else {
            throw Self.unreadable("the envelope is truncated or of an unknown version")
        }
        nonce = Array(bytes[1...Self.nonceByteCount])
        ciphertext = Array(bytes[(1 + Self.nonceByteCount)..<(bytes.count - Self.tagByteCount)])
        tag = Array(bytes.suffix(Self.tagByteCount))
    }

    private init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// Derives K_bio from a session proof and a salt.
    /// - Throws: ``BiometricUnlockError`` `ERR-107-001` when the session proof is empty.
    public static func deriveKey(sessionProof: [UInt8], salt: [UInt8]) throws(BiometricUnlockError) -> [UInt8] {
        guard !sessionProof.isEmpty else {
            throw BiometricUnlockError(
                .unavailable,
                "the password verifier returned an empty session proof, so no biometric key can be derived; "
                    + "fix the verifier"
            )
        }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: sessionProof),
            salt: salt,
            info: Array(BiometricUnlock.keyDerivationInfo.utf8),
            outputByteCount: keyByteCount
        )
        return key.withUnsafeBytes { Array($0) }
    }

    /// Encrypts the session secret under K_bio.
    /// - Throws: ``BiometricUnlockError`` `ERR-107-001` when the key or nonce has the wrong size.
    public static func seal(
        _ secret: [UInt8],
        key: [UInt8],
        nonce: [UInt8],
        associatedData: [UInt8]
    ) throws(BiometricUnlockError) -> BiometricEnvelope {
        guard key.count == keyByteCount, nonce.count == nonceByteCount else {
            throw unreadable("K_bio must be \(keyByteCount) bytes and the nonce \(nonceByteCount)")
        }
        do {
            let box = try AES.GCM.seal(
                secret,
                using: SymmetricKey(data: key),
                nonce: AES.GCM.Nonce(data: nonce),
                authenticating: associatedData
            )
            return BiometricEnvelope(nonce: nonce, ciphertext: Array(box.ciphertext), tag: Array(box.tag))
        } catch {
            throw unreadable("AES-GCM refused to seal the envelope")
        }
    }

    /// Decrypts the session secret; the caller owns (and should wipe) the result.
    /// - Throws: ``BiometricUnlockError`` `ERR-107-001` when the key is wrong or anything was altered.
    public func open(key: [UInt8], associatedData: [UInt8]) throws(BiometricUnlockError) -> [UInt8] {
        guard key.count == Self.keyByteCount, nonce.count == Self.nonceByteCount, tag.count == Self.tagByteCount
        else {
            throw Self.unreadable("K_bio must be \(Self.keyByteCount) bytes")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
        } catch {
            throw Self.unreadable("the envelope does not open with this key (wrong key, or altered envelope)")
        }
    }

    /// The associated data binding an envelope to its user and device:
    /// `biometric-unlock/envelope/v1` ‖ 0x00 ‖ userId ‖ 0x00 ‖ deviceId (UTF-8).
    public static func associatedData(userId: String, deviceId: String) -> [UInt8] {
        Array("biometric-unlock/envelope/v1".utf8) + [0] + Array(userId.utf8) + [0] + Array(deviceId.utf8)
    }

    private static func unreadable(_ detail: String) -> BiometricUnlockError {
        BiometricUnlockError(
            .unavailable,
            "biometric envelope: \(detail); disable and enable biometric unlock again, with the password"
        )
    }
}
