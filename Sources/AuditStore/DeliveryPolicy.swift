/// The limits of delivery. Every limit is a setting; the defaults are the source requirements' values.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Pending entries at most; past it the oldest leave delivery (FIFO), routine before critical.
    public var maxEvents = 1000
    /// Pending entries older than this (wall time, with the clock-jump rule of ``EffectiveClock``) expire.
    public var maxAge: Duration = .seconds(72 * 3600)
    /// Delays before retrying after a failure: the n-th consecutive failure waits `retrySchedule[n-1]`, and the
    /// last value after that.
    public var retrySchedule: [Duration] = [.seconds(1), .seconds(5), .seconds(30), .seconds(60), .seconds(300)]
    /// Each delay is scaled by a random factor in `1 - jitter ... 1 + jitter`.
    public var jitter = 0.2
    /// Retryable rejections of one entry before it moves to the DLQ.
    public var maxAttempts = 10
    /// DLQ entries at most; past it the oldest leave.
    public var maxDeadLetters = 100
    /// More pending entries than this makes health `degraded`.
    public var degradedPending = 500
    /// More entries sealed but not covered by a verified collector receipt than this makes health `degraded`.
    public var degradedLag = 1000
    /// The oldest entry not covered by a verified collector receipt waiting longer than this makes health
    /// `degraded` (the collector's copy stopped advancing, even with nothing pending).
    public var degradedLagAge: Duration = .seconds(300)
    /// The backend unreachable this long makes health `failOpen`.
    public var failOpenAfter: Duration = .seconds(6 * 3600)
    /// In fail-open, the backend is probed at least this often.
    public var probeInterval: Duration = .seconds(300)
    /// While the backend is unreachable at the network level (refused, reset, timeout), a connection probe runs
    /// this often and ends the backoff pause as soon as the backend answers; nil turns probing off. Probes are
    /// never sent while a backend that answers asks to wait (5xx, 429, Retry-After).
    public var reachabilityProbe: Duration? = .milliseconds(500)
    /// Longest Retry-After honoured.
    public var maxRetryAfter: Duration = .seconds(3600)
    /// Entries per batch.
    public var batchSize = 1000
    /// A wall-clock step of more than this against the monotonic clock is a jump (see ``EffectiveClock``).
    public var clockJumpTolerance: Duration = .seconds(300)
    /// Delivered entries older than this are pruned from the local log; nil keeps everything.
    public var retention: Duration? = nil

    /// The defaults.
    public init() {}

    /// The delay after `failures` consecutive failures (1-based), before jitter.
    public func delay(afterFailures failures: Int) -> Duration {
        guard !retrySchedule.isEmpty, failures > 0 else { return .zero }
        return retrySchedule[min(failures, retrySchedule.count) - 1]
    }

    /// The delay after `failures` failures with jitter: `unit` is a random number in 0 ..< 1 (clamped; NaN counts
    /// as the middle). A factor that is not a finite non-negative number leaves the delay unjittered.
    public func jitteredDelay(afterFailures failures: Int, unit: Double) -> Duration {
        let base = delay(afterFailures: failures)
        let unit = unit.isNaN ? 0.5 : min(max(unit, 0), 1)
        let factor = 1 - jitter + 2 * jitter * unit
        guard factor.isFinite, factor >= 0, factor <= 2 else { return base }
        return base * factor
    }

    /// The longest delay of the schedule ("the backoff maximum").
    public var maxDelay: Duration { retrySchedule.max() ?? .zero }
}

extension Duration {
    /// Whole milliseconds (truncated).
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
