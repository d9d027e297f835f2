/// The thresholds of the unlock policy; every one has the documented default.
public struct UnlockPolicySettings: Sendable, Hashable {
    /// Failed biometric attempts after which the password is required (`LOCKOUT`). Default 3.
    public var maxBiometricAttempts = 3
    /// Longest time since the last strong (password) authentication before the password is required again
    /// (`TIMEOUT_EXCEEDED`; strictly more than this). Default 30 minutes.
    public var strongAuthenticationTimeout: Duration = .seconds(30 * 60)
    /// How recent a password change must be to force the password (`PASSWORD_CHANGED`). Default 24 hours.
    public var passwordChangeWindow: Duration = .seconds(24 * 60 * 60)
    /// How far the wall clock may disagree with the monotonic clock about the time elapsed since the last strong
    /// authentication before the clock counts as inconsistent (`CLOCK_INCONSISTENT`). Default 5 minutes.
    public var clockDriftTolerance: Duration = .seconds(5 * 60)
    /// How far past the last strong authentication the wall clock may be before it is implausible
    /// (`CLOCK_INCONSISTENT`). Default 400 days.
    public var maximumPlausibleClockAdvance: Duration = .seconds(400 * 24 * 60 * 60)
    /// The anti-brute-force policy of the password (unlock and biometric enrollment alike): by default 5 wrong
    /// passwords in a row lock attempts out for 30 s, doubling at each further wrong one up to 1 hour.
    public var passwordThrottle = AttemptThrottleSettings()

    /// Creates the default settings.
    public init() {}
}
