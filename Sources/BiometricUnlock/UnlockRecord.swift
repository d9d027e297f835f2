public import AuditChain

/// What the unlock flow must remember across launches; kept in the ``SecureKeyStore`` so it resists tampering.
public struct UnlockRecord: Sendable, Hashable {
    /// When the password was last verified; nil if never since install.
    public var lastStrongAuthenticationAt: AuditTimestamp?
    /// Failed biometric attempts since the last successful unlock; nil when the stored value could not be read
    /// (the policy then forces the password and resets it: ERR-107-050).
    public var failedBiometricAttempts: Int?
    /// The ``DeviceSignals/bootSessionID()`` at the last password unlock, to detect a reboot.
    public var bootSessionAtLastUnlock: String?
    /// Wrong passwords in a row and the password lockout they started (docs/BIOMETRIC.md, "Password attempts and
    /// throttling"); kept here so a relaunch does not reset them.
    public var passwordThrottle: AttemptThrottle

    /// Creates a record.
    public init(
        lastStrongAuthenticationAt: AuditTimestamp? = nil,
        failedBiometricAttempts: Int? = 0,
        bootSessionAtLastUnlock: String? = nil,
        passwordThrottle: AttemptThrottle = AttemptThrottle()
    ) {
        self.lastStrongAuthenticationAt = lastStrongAuthenticationAt
        self.failedBiometricAttempts = failedBiometricAttempts
        self.bootSessionAtLastUnlock = bootSessionAtLastUnlock
        self.passwordThrottle = passwordThrottle
    }

    /// The record of a fresh install: never authenticated, no failures.
    public static let initial = UnlockRecord()
    /// The record used when the stored one cannot be read: the counter is unknown.
    public static let unreadable = UnlockRecord(failedBiometricAttempts: nil)
}
