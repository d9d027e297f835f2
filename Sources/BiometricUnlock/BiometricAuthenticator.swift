/// The platform's biometric prompt (LocalAuthentication on Apple platforms, a scripted double in a simulator).
///
/// On platforms where reading K_bio is what shows the prompt, evaluate the prompt here and pass the authenticated
/// context to the ``SecureKeyStore`` so that ``SecureKeyStore/readBiometricKey()`` does not prompt again.
public protocol BiometricAuthenticator: Sendable {
    /// Whether a biometric can be used now, and which kind.
    func availability() async -> BiometricAvailability
    /// Shows the prompt with `reason` and reports how it ended.
    func authenticate(reason: String) async -> BiometricPromptResult
}

/// Whether a biometric can be used.
public enum BiometricAvailability: Sendable, Hashable {
    /// A biometric is enrolled; `biometryType` names it (e.g. `faceID`, `touchID`, `fingerprint`).
    case available(biometryType: String)
    /// No sensor, nothing enrolled, or the platform refused.
    case unavailable
}

/// How a biometric prompt ended.
public enum BiometricPromptResult: Sendable, Hashable {
    /// The biometric matched.
    case success
    /// The biometric did not match.
    case failed
    /// The user cancelled (or chose the fallback button).
    case cancelled
    /// The sensor became unavailable (locked out by the system, removed, ...).
    case unavailable
}
