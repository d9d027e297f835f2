/// Why the password is required; the value of `PASSWORD_AUTH_FALLBACK.reason`.
///
/// The first eight are the policy's reasons, in order of precedence (``policyOrder``); the others come from the
/// biometric prompt.
public enum PasswordReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A reboot was detected since the last unlock.
    case deviceBoot = "DEVICE_BOOT"
    /// The wall clock is behind the last strong authentication or implausibly far ahead (ERR-107-070).
    case clockInconsistent = "CLOCK_INCONSISTENT"
    /// The password changed within the recent window and has not been entered since.
    case passwordChanged = "PASSWORD_CHANGED"
    /// The failed-attempt counter is unreadable or impossible (ERR-107-050); it is reset.
    case counterInconsistent = "COUNTER_INCONSISTENT"
    /// Too many failed biometric attempts.
    case lockout = "LOCKOUT"
    /// Too long since the last strong authentication.
    case timeoutExceeded = "TIMEOUT_EXCEEDED"
    /// The enrolled biometric set changed (ERR-107-060).
    case biometricRevoked = "BIOMETRIC_REVOKED"
    /// First unlock after install, or biometric unlock is not enabled.
    case firstUnlock = "FIRST_UNLOCK"
    /// The user cancelled the biometric prompt (ERR-107-031).
    case promptCancelled = "PROMPT_CANCELLED"
    /// The biometric sensor is unavailable (ERR-107-001).
    case biometricUnavailable = "BIOMETRIC_UNAVAILABLE"
    /// K_bio or the envelope is missing or does not open (ERR-107-001); the artefacts were purged.
    case artefactsUnreadable = "ARTEFACTS_UNREADABLE"
    /// The user chose the password after a failed biometric attempt.
    case userChosePassword = "USER_CHOSE_PASSWORD"

    /// The policy's reasons, highest precedence first.
    public static let policyOrder: [PasswordReason] = [
        .deviceBoot, .clockInconsistent, .passwordChanged, .counterInconsistent, .lockout, .timeoutExceeded,
        .biometricRevoked, .firstUnlock,
    ]

    /// The error reported with this reason when the reason is a fault; nil for ordinary policy decisions.
    public var errorCode: BiometricUnlockError.Code? {
        switch self {
        case .clockInconsistent: .inconsistentClock
        case .counterInconsistent: .inconsistentCounter
        case .biometricRevoked: .biometricSetChanged
        case .promptCancelled: .promptCancelled
        case .biometricUnavailable, .artefactsUnreadable: .unavailable
        case .deviceBoot, .passwordChanged, .lockout, .timeoutExceeded, .firstUnlock, .userChosePassword: nil
        }
    }

    /// The reason's wire name, e.g. `DEVICE_BOOT`.
    public var description: String { rawValue }
}
