import AuditChain

/// Decides whether a biometric may unlock: pure, a function of the context and the settings.
///
/// The password is required for the first matching reason, in this order (``PasswordReason/policyOrder``):
/// `DEVICE_BOOT`, `CLOCK_INCONSISTENT`, `PASSWORD_CHANGED`, `COUNTER_INCONSISTENT`, `LOCKOUT`,
/// `TIMEOUT_EXCEEDED`, `BIOMETRIC_REVOKED`, `FIRST_UNLOCK`. The two integrity checks sit just before the first
/// rule that depends on the value they check: the clock before the time-based rules, the counter before lockout.
public struct UnlockPolicyEngine: Sendable {
    /// The thresholds.
    public var settings: UnlockPolicySettings

    /// Creates an engine.
    public init(settings: UnlockPolicySettings = .init()) {
        self.settings = settings
    }

    /// The decision for a context.
    public func evaluate(_ context: UnlockContext) -> UnlockPolicy {
        if context.rebootDetected { return .passwordRequired(.deviceBoot) }
        guard isClockConsistent(context) else { return .passwordRequired(.clockInconsistent) }
        if isRecentUnconfirmedPasswordChange(context) { return .passwordRequired(.passwordChanged) }
        guard let failures = context.failedBiometricAttempts, failures >= 0 else {
            return .passwordRequired(.counterInconsistent)
        }
        if failures >= settings.maxBiometricAttempts { return .passwordRequired(.lockout) }
        if let elapsed = elapsedSinceStrongAuthentication(context),
            elapsed > settings.strongAuthenticationTimeout.wholeMilliseconds
        {
            return .passwordRequired(.timeoutExceeded)
        }
        if context.biometricSetChanged { return .passwordRequired(.biometricRevoked) }
        if !context.biometricsEnabled || context.lastStrongAuthenticationAt == nil {
            return .passwordRequired(.firstUnlock)
        }
        return .biometricAllowed
    }

    /// Whether the wall clock can be trusted (fail safe, ERR-107-070).
    ///
    /// It cannot when it is outside 1970 ... 9999, before the last strong authentication or the last password
    /// change, more than ``UnlockPolicySettings/maximumPlausibleClockAdvance`` past the last strong
    /// authentication, or when it disagrees with the monotonic clock about the time elapsed since then by more
    /// than ``UnlockPolicySettings/clockDriftTolerance``.
    public func isClockConsistent(_ context: UnlockContext) -> Bool {
        let now = context.now
        guard now >= .minimum, now <= .maximum else { return false }
        if let changed = context.passwordChangedAt, changed > now { return false }
        guard let last = context.lastStrongAuthenticationAt else { return true }
        guard now >= last else { return false }
        let wallElapsed = now.millisecondsSinceEpoch - last.millisecondsSinceEpoch
        guard wallElapsed <= settings.maximumPlausibleClockAdvance.wholeMilliseconds else { return false }
        if let monotonic = context.monotonicElapsedSinceStrongAuthentication?.wholeMilliseconds {
            let drift = wallElapsed > monotonic ? wallElapsed - monotonic : monotonic - wallElapsed
            guard drift <= settings.clockDriftTolerance.wholeMilliseconds else { return false }
        }
        return true
    }

    /// A change within the window that the password has not been entered since (an entry at the same millisecond
    /// counts as after it: it is the entry that made the change).
    private func isRecentUnconfirmedPasswordChange(_ context: UnlockContext) -> Bool {
        guard let changed = context.passwordChangedAt else { return false }
        let age = context.now.millisecondsSinceEpoch - changed.millisecondsSinceEpoch
        guard age <= settings.passwordChangeWindow.wholeMilliseconds else { return false }
        guard let last = context.lastStrongAuthenticationAt else { return true }
        return last < changed
    }

    /// Milliseconds since the last strong authentication: the larger of the wall and monotonic measures.
    private func elapsedSinceStrongAuthentication(_ context: UnlockContext) -> Int64? {
        guard let last = context.lastStrongAuthenticationAt else { return nil }
        let wall = context.now.millisecondsSinceEpoch - last.millisecondsSinceEpoch
        guard let monotonic = context.monotonicElapsedSinceStrongAuthentication?.wholeMilliseconds else { return wall }
        return max(wall, monotonic)
    }
}
