public import AuditChain

extension UnlockStateMachine {
    /// The `reason` of an unlock attempt's events: why the password is required.
    var unlockAttemptReason: PasswordAttemptReason { .required(passwordReason ?? .firstUnlock) }

    /// Whether a password attempt (to unlock, or to enable biometric unlock) means something in this state.
    func acceptsPasswordAttempt(forEnrollment: Bool) -> Bool {
        forEnrollment ? state == .unlocked : state.acceptsPassword
    }

    /// The milliseconds before a password attempt may be checked (0: now), by the record's throttle.
    /// - Parameters:
    ///   - now: the wall-clock time.
    ///   - monotonicElapsedSinceLockout: the monotonic time since the lockout started, when the shell measured it.
    public func passwordRetryAfterMilliseconds(now: AuditTimestamp, monotonicElapsedSinceLockout: Duration?) -> Int64 {
        record.passwordThrottle.remainingMilliseconds(now: now, monotonicElapsed: monotonicElapsedSinceLockout)
    }

    /// A wrong password: counted in the record, `PASSWORD_AUTH_FAILURE` (ERR-107-010), and at the threshold a
    /// lockout with `PASSWORD_ATTEMPTS_THROTTLED` and ERR-107-011.
    mutating func rejectPassword(at time: AuditTimestamp, forEnrollment: Bool, _ decision: inout UnlockDecision) {
        let reason: PasswordAttemptReason = forEnrollment ? .biometricEnrollment : unlockAttemptReason
        let attempt = record.passwordThrottle.nextAttemptNumber
        let lockout = record.passwordThrottle.recordFailure(at: time, settings: policy.settings.passwordThrottle)
        decision.actions.append(
            .emit(.passwordAuthFailure(attemptCount: attempt, reason: reason, errorCode: .badPassword))
        )
        decision.report(.passwordRejected())
        guard let lockout else { return }
        decision.actions.append(
            .emit(
                .passwordAttemptsThrottled(
                    failedAttempts: record.passwordThrottle.failedAttempts,
                    lockoutMs: lockout.durationMilliseconds,
                    reason: reason
                )
            )
        )
        decision.report(.passwordThrottled(retryAfterMs: lockout.durationMilliseconds))
    }

    /// A password attempt refused unchecked: `PASSWORD_AUTH_FAILURE` (ERR-107-011, `retryAfterMs`); a wall clock set
    /// back before the lockout's start restarts the lockout at `time`.
    mutating func refusePassword(
        at time: AuditTimestamp,
        retryAfterMs: Int64,
        forEnrollment: Bool,
        _ decision: inout UnlockDecision
    ) {
        let reason: PasswordAttemptReason = forEnrollment ? .biometricEnrollment : unlockAttemptReason
        record.passwordThrottle.noteRefusal(at: time)
        decision.actions.append(
            .emit(
                .passwordAuthFailure(
                    attemptCount: record.passwordThrottle.nextAttemptNumber,
                    reason: reason,
                    errorCode: .passwordThrottled,
                    retryAfterMs: max(0, retryAfterMs)
                )
            )
        )
        decision.report(.passwordThrottled(retryAfterMs: max(0, retryAfterMs)))
    }
}
