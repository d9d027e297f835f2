/// The states of the unlock flow (docs/BIOMETRIC.md, "State diagram").
public enum UnlockState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Deciding, from the policy, whether to prompt for a biometric or require the password.
    case startupCheck = "STARTUP_CHECK"
    /// The biometric prompt is shown.
    case promptBiometric = "PROMPT_BIOMETRIC"
    /// A biometric attempt failed; the user may retry while attempts remain, or choose the password.
    case biometricFailed = "BIOMETRIC_FAILED"
    /// Only the password can unlock.
    case requirePassword = "REQUIRE_PASSWORD"
    /// The session secret is available.
    case unlocked = "UNLOCKED"
    /// The app is locked (background, lock or timeout); foreground starts a new check.
    case locked = "LOCKED"
    /// The biometric set changed: biometric unlock was revoked and its artefacts purged; only the password unlocks.
    case revoked = "REVOKED"

    /// Whether only the password can leave this state towards `UNLOCKED`.
    public var acceptsPassword: Bool { self == .requirePassword || self == .revoked }

    /// The state's wire name, e.g. `PROMPT_BIOMETRIC`.
    public var description: String { rawValue }
}
