/// Namespace of the biometric unlock producer: versions and the fixed labels of its key derivation.
///
/// The producer is pure logic: ``UnlockPolicyEngine`` decides whether a biometric may unlock,
/// ``UnlockStateMachine`` turns inputs into a new state and actions, ``BiometricEnvelope`` holds the key
/// derivation and the AES-GCM envelope, and ``BiometricUnlockController`` is the thin shell that performs the
/// actions through the platform protocols (``UnlockPlatform``). See docs/BIOMETRIC.md.
public enum BiometricUnlock: Sendable {
    /// Version of the unlock policy rules.
    public static let policyVersion = 1
    /// The HKDF `info` label of K_bio.
    public static let keyDerivationInfo = "biometric-unlock"
}
