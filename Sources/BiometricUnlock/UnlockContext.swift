public import AuditChain

/// The facts the unlock policy decides on; built by ``UnlockStateMachine`` from its record and an observation.
public struct UnlockContext: Sendable, Hashable {
    /// The wall-clock time now.
    public var now: AuditTimestamp
    /// Whether the device restarted since the last unlock.
    public var rebootDetected: Bool
    /// When the password last changed, if known.
    public var passwordChangedAt: AuditTimestamp?
    /// Failed biometric attempts since the last successful unlock; nil when the counter could not be read.
    public var failedBiometricAttempts: Int?
    /// When the password (the strong authentication) was last verified; nil if never since install.
    public var lastStrongAuthenticationAt: AuditTimestamp?
    /// Time since the last strong authentication by the monotonic clock, when this process measured it.
    public var monotonicElapsedSinceStrongAuthentication: Duration?
    /// Whether the enrolled biometric set changed since K_bio was bound to it.
    public var biometricSetChanged: Bool
    /// Whether biometric unlock is enabled (K_bio and the envelope exist).
    public var biometricsEnabled: Bool

    /// Creates a context; the defaults describe an enabled device with no reason to require the password.
    public init(
        now: AuditTimestamp,
        rebootDetected: Bool = false,
        passwordChangedAt: AuditTimestamp? = nil,
        failedBiometricAttempts: Int? = 0,
        lastStrongAuthenticationAt: AuditTimestamp?,
        monotonicElapsedSinceStrongAuthentication: Duration? = nil,
        biometricSetChanged: Bool = false,
        biometricsEnabled: Bool = true
    ) {
        self.now = now
        self.rebootDetected = rebootDetected
        self.passwordChangedAt = passwordChangedAt
        self.failedBiometricAttempts = failedBiometricAttempts
        self.lastStrongAuthenticationAt = lastStrongAuthenticationAt
        self.monotonicElapsedSinceStrongAuthentication = monotonicElapsedSinceStrongAuthentication
        self.biometricSetChanged = biometricSetChanged
        self.biometricsEnabled = biometricsEnabled
    }
}
