/// The policy's decision: a biometric may unlock, or the password is required and why.
public enum UnlockPolicy: Sendable, Hashable {
    /// A biometric may unlock.
    case biometricAllowed
    /// The password is required.
    case passwordRequired(PasswordReason)

    /// The reason the password is required, or nil when a biometric is allowed.
    public var passwordReason: PasswordReason? {
        if case .passwordRequired(let reason) = self { return reason }
        return nil
    }
}
