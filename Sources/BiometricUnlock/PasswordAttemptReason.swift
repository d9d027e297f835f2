/// What a password attempt was for; the value of the `reason` attribute of `PASSWORD_AUTH_SUCCESS`,
/// `PASSWORD_AUTH_FAILURE` and `PASSWORD_ATTEMPTS_THROTTLED`.
public enum PasswordAttemptReason: Sendable, Hashable, CustomStringConvertible {
    /// Unlocking, in `REQUIRE_PASSWORD` or `REVOKED`: the reason the password was required (e.g. `LOCKOUT`).
    case required(PasswordReason)
    /// Confirming the password to enable biometric unlock (`BIOMETRIC_ENROLLMENT`).
    case biometricEnrollment

    /// The wire name of ``biometricEnrollment``.
    public static let biometricEnrollmentName = "BIOMETRIC_ENROLLMENT"

    /// The attribute value: the ``PasswordReason``'s name, or `BIOMETRIC_ENROLLMENT`.
    public var rawValue: String {
        switch self {
        case .required(let reason): reason.rawValue
        case .biometricEnrollment: Self.biometricEnrollmentName
        }
    }

    /// The attribute value.
    public var description: String { rawValue }
}
