/// Namespace of the biometric unlock producer (built in a later step).
public enum BiometricUnlock {
    /// Version of the unlock policy rules.
    public static let policyVersion = 1
}
