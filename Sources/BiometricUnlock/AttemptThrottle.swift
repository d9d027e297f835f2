public import AuditChain

/// The throttling state of one secret checked on the device: the wrong attempts in a row and the current lockout.
///
/// Pure: the caller passes the wall-clock time (from its injected clock) and, when it measured one, the monotonic
/// time since the lockout started. It is kept in the record of its owner (``UnlockRecord/passwordThrottle``), so a
/// relaunch does not reset it.
///
/// The lockout ends when both clocks say it is over: the wall clock since ``AttemptLockout/startedAt``, and the
/// monotonic clock when the process that started it is still running. A wall clock set back before the start is
/// inconsistent (as for the unlock policy, ERR-107-070): the lockout is not over, and a refused attempt restarts
/// it at the new reading, so it neither ends early nor lasts more than its duration past the corrected clock.
public struct AttemptThrottle: Sendable, Hashable {
    /// Wrong attempts since the last accepted one (refused, unchecked attempts do not count).
    public var failedAttempts: Int
    /// The lockout in force or last in force; nil below the threshold and after a success.
    public var lockout: AttemptLockout?

    /// Creates a state (by default: no failure, no lockout).
    public init(failedAttempts: Int = 0, lockout: AttemptLockout? = nil) {
        self.failedAttempts = failedAttempts
        self.lockout = lockout
    }

    /// The number the next attempt has since the last accepted one: the wrong attempts so far plus one (at least
    /// 1, at most `Int32.max`, as the catalogue's `attemptCount`).
    public var nextAttemptNumber: Int { min(max(0, failedAttempts), Int(Int32.max) - 1) + 1 }

    /// Milliseconds before an attempt may be checked again; 0 when it may be checked now.
    /// - Parameters:
    ///   - now: the wall-clock time.
    ///   - monotonicElapsed: the monotonic time since the lockout started, when this process measured it.
    public func remainingMilliseconds(now: AuditTimestamp, monotonicElapsed: Duration? = nil) -> Int64 {
        guard let lockout, lockout.durationMilliseconds > 0 else { return 0 }
        let (wall, overflow) = now.millisecondsSinceEpoch.subtractingReportingOverflow(
            lockout.startedAt.millisecondsSinceEpoch
        )
        // The clock is behind the start (or absurd): fail safe, the whole lockout remains.
        guard !overflow, wall >= 0 else { return lockout.durationMilliseconds }
        var elapsed = wall
        if let monotonic = monotonicElapsed?.wholeMilliseconds { elapsed = min(elapsed, max(0, monotonic)) }
        return elapsed >= lockout.durationMilliseconds ? 0 : lockout.durationMilliseconds - elapsed
    }

    /// Whether the wall clock is behind the start of the lockout (it was set back).
    public func isClockBehindLockout(now: AuditTimestamp) -> Bool {
        guard let lockout else { return false }
        return now < lockout.startedAt
    }

    /// An attempt refused unchecked at `now`: when the wall clock is behind the lockout's start, the lockout
    /// restarts at `now` with its full duration.
    public mutating func noteRefusal(at now: AuditTimestamp) {
        guard let current = lockout, now < current.startedAt else { return }
        lockout = AttemptLockout(startedAt: now, durationMilliseconds: current.durationMilliseconds)
    }

    /// A wrong attempt checked at `now`: counts it and returns the lockout it starts (from the threshold on, every
    /// wrong attempt starts a longer one), or nil.
    public mutating func recordFailure(at now: AuditTimestamp, settings: AttemptThrottleSettings) -> AttemptLockout? {
        failedAttempts = nextAttemptNumber
        let duration = settings.lockoutMilliseconds(afterFailures: failedAttempts)
        guard duration > 0 else {
            lockout = nil
            return nil
        }
        let started = AttemptLockout(startedAt: now, durationMilliseconds: duration)
        lockout = started
        return started
    }

    /// An accepted attempt: the count and the lockout are cleared.
    public mutating func recordSuccess() {
        failedAttempts = 0
        lockout = nil
    }

    /// One attempt at `now`: refused unchecked during a lockout (`check` not called), else decided by `check()`
    /// and counted. What the lock screens (``ConversationPins``, ``PasscodeLock``) turn into their events.
    /// - Parameter monotonicElapsed: the monotonic time since the lockout started, when the caller measured it.
    public mutating func attempt(
        at now: AuditTimestamp,
        monotonicElapsed: Duration?,
        settings: AttemptThrottleSettings,
        check: () -> Bool
    ) -> AttemptResult {
        let remaining = remainingMilliseconds(now: now, monotonicElapsed: monotonicElapsed)
        if remaining > 0 {
            noteRefusal(at: now)
            return .refused(attemptCount: nextAttemptNumber, retryAfterMs: remaining)
        }
        let attempt = nextAttemptNumber
        if check() {
            recordSuccess()
            return .accepted(attemptCount: attempt)
        }
        let lockout = recordFailure(at: now, settings: settings)
        return .failed(attemptCount: attempt, failedAttempts: failedAttempts, lockout: lockout)
    }
}

/// What became of one attempt (``AttemptThrottle/attempt(at:monotonicElapsed:settings:check:)``).
public enum AttemptResult: Sendable, Hashable {
    /// Refused without being checked: a lockout is in force for `retryAfterMs` more.
    case refused(attemptCount: Int, retryAfterMs: Int64)
    /// Checked and accepted; the count starts over.
    case accepted(attemptCount: Int)
    /// Checked and wrong: `failedAttempts` in a row now, and the lockout it starts, if any.
    case failed(attemptCount: Int, failedAttempts: Int, lockout: AttemptLockout?)
}

/// A period during which attempts are refused without being checked.
public struct AttemptLockout: Sendable, Hashable {
    /// When it started, by the wall clock.
    public var startedAt: AuditTimestamp
    /// How long it lasts.
    public var durationMilliseconds: Int64

    /// Creates a lockout.
    public init(startedAt: AuditTimestamp, durationMilliseconds: Int64) {
        self.startedAt = startedAt
        self.durationMilliseconds = durationMilliseconds
    }
}
