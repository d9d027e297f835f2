public import AuditChain

/// The app passcode lock as audit state: on or off, its grace period, the wrong attempts in a row and their lockout,
/// and "forgot passcode" (a logout). Pure: it never sees the passcode.
///
/// The app keeps the passcode (hashed) and checks it; it passes the check as a closure to
/// ``attempt(at:monotonicElapsedSinceLockout:check:)``, which does not call it while attempts are throttled. Every
/// call returns the events to record (deliver them through the same ``AuditSink`` as the unlock flow). Keep this
/// value in the app's secure storage so a relaunch does not reset the count.
public struct PasscodeLock: Sendable, Hashable {
    /// The anti-brute-force policy of the passcode (default: 5 wrong, then 30 s doubling up to 1 h).
    public var settings: AttemptThrottleSettings
    /// Whether the passcode lock is on.
    public private(set) var isEnabled = false
    /// How long the app may stay in the background without asking for the passcode again.
    public private(set) var gracePeriod: Duration = .zero
    /// The wrong attempts in a row and their lockout.
    public private(set) var throttle = AttemptThrottle()

    /// Creates a lock that is off.
    public init(settings: AttemptThrottleSettings = AttemptThrottleSettings()) {
        self.settings = settings
    }

    /// Turns the lock on (or changes its grace period, negative read as 0): `PASSCODE_LOCK_ENABLED
    /// {gracePeriodSeconds}`; the count starts over.
    public mutating func enable(gracePeriod: Duration) -> [LockScreenAuditEvent] {
        self.gracePeriod = max(.zero, gracePeriod)
        isEnabled = true
        throttle = AttemptThrottle()
        return [.passcodeLockEnabled(gracePeriodSeconds: self.gracePeriod.components.seconds)]
    }

    /// Turns the lock off: `PASSCODE_LOCK_DISABLED`; nothing happens if it was off.
    public mutating func disable() -> [LockScreenAuditEvent] {
        guard isEnabled else { return [] }
        isEnabled = false
        throttle = AttemptThrottle()
        return [.passcodeLockDisabled]
    }

    /// Whether the passcode must be entered on return from the background after `elapsed` by the monotonic clock:
    /// when the lock is on and the time is unknown (nil: e.g. after a relaunch), negative, or longer than the grace
    /// period (fail safe).
    public func isPasscodeRequired(afterBackground elapsed: Duration?) -> Bool {
        guard isEnabled else { return false }
        guard let elapsed, elapsed >= .zero else { return true }
        return elapsed > gracePeriod
    }

    /// One passcode attempt at `now`.
    ///
    /// Refused unchecked (`check` not called) while attempts are throttled: `PASSCODE_AUTH_FAILURE` with
    /// `retryAfterMs`. Otherwise `check()` decides: `PASSCODE_AUTH_SUCCESS` (the count starts over) or
    /// `PASSCODE_AUTH_FAILURE`, followed at the threshold by `PASSCODE_ATTEMPTS_THROTTLED`. With the lock off nothing
    /// is accepted or logged.
    /// - Parameters:
    ///   - monotonicElapsedSinceLockout: the monotonic time since the lockout started, when the app measured it.
    ///   - check: compares the entered passcode with the stored one; the passcode never reaches this type.
    public mutating func attempt(
        at now: AuditTimestamp,
        monotonicElapsedSinceLockout: Duration? = nil,
        check: () -> Bool
    ) -> LockScreenAttempt {
        guard isEnabled else { return LockScreenAttempt(accepted: false, events: []) }
        let result = throttle.attempt(
            at: now,
            monotonicElapsed: monotonicElapsedSinceLockout,
            settings: settings,
            check: check
        )
        switch result {
        case .refused(let attemptCount, let retryAfterMs):
            let event = LockScreenAuditEvent.passcodeAuthFailure(attemptCount: attemptCount, retryAfterMs: retryAfterMs)
            return LockScreenAttempt(accepted: false, retryAfterMs: retryAfterMs, events: [event])
        case .accepted(let attemptCount):
            return LockScreenAttempt(accepted: true, events: [.passcodeAuthSuccess(attemptCount: attemptCount)])
        case .failed(let attemptCount, let failedAttempts, let lockout):
            let failed = LockScreenAuditEvent.passcodeAuthFailure(attemptCount: attemptCount)
            guard let lockout else { return LockScreenAttempt(accepted: false, events: [failed]) }
            let throttled = LockScreenAuditEvent.passcodeAttemptsThrottled(
                failedAttempts: failedAttempts,
                lockoutMs: lockout.durationMilliseconds
            )
            return LockScreenAttempt(
                accepted: false,
                retryAfterMs: lockout.durationMilliseconds,
                events: [failed, throttled]
            )
        }
    }

    /// "Forgot passcode": the user is logged out and the lock is off: `FORGOT_PASSCODE_LOGOUT`, then the
    /// conversation PINs' reset (`pins.logout()`, `CONVERSATION_PINS_RESET {reason: LOGOUT}`).
    public mutating func forgotPasscode(resetting pins: inout ConversationPins) -> [LockScreenAuditEvent] {
        isEnabled = false
        throttle = AttemptThrottle()
        return [.forgotPasscodeLogout] + pins.logout()
    }
}
