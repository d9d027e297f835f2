/// The platform's secure storage (the Keychain with biometric access control, a TEE-backed keystore).
///
/// It keeps K_bio bound to the biometric set enrolled when it was stored, the envelope, and the ``UnlockRecord``.
/// The binding is the implementation's duty: any change of the enrolled set must invalidate K_bio and be reported
/// as ``BiometricKeyStatus/invalidatedByBiometricChange`` (for example `.biometryCurrentSet` on Apple platforms).
public protocol SecureKeyStore: Sendable {
    /// Stores K_bio, bound to the current biometric set, replacing any previous one.
    func storeBiometricKey(_ key: [UInt8]) async throws
    /// Stores the serialized envelope, replacing any previous one.
    func storeEnvelope(_ envelope: [UInt8]) async throws
    /// The state of K_bio, without prompting.
    func biometricKeyStatus() async -> BiometricKeyStatus
    /// Releases K_bio after a successful biometric prompt.
    func readBiometricKey() async -> BiometricKeyRead
    /// The serialized envelope, if stored.
    func readEnvelope() async -> [UInt8]?
    /// Deletes K_bio and the envelope (not the record).
    func removeBiometricArtefacts() async
    /// The stored record; nil on a fresh install; throws when it exists but cannot be read.
    func loadRecord() async throws -> UnlockRecord?
    /// Stores the record.
    func saveRecord(_ record: UnlockRecord) async throws
}

/// The result of releasing K_bio.
public enum BiometricKeyRead: Sendable, Hashable {
    /// The key; the caller wipes it after use.
    case key([UInt8])
    /// No key is stored.
    case missing
    /// The key was invalidated because the enrolled biometric set changed.
    case invalidatedByBiometricChange
}
