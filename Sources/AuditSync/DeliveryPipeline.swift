public import AuditStore
/// Why the collector's copy is held back (health ``DeliveryHealth/failing``).
public enum DeliveryHold: Sendable, Hashable {
    /// The collector refused a pinned entry (a system record or the genesis): delivery of what follows it cannot
    /// succeed, so it and everything after it stay queued.
    case refused(seq: UInt64, reason: String)
    /// The collector's answer carried a receipt that does not verify, names another log or another entry than the
    /// device holds, or goes back: the answer is not trusted and nothing it says is applied.
    case badReceipt(String)

    /// A one-line description for status and logs.
    public var description: String {
        switch self {
        case .refused(let seq, let reason):
            "the collector refuses seq \(seq), which the entries after it depend on: \(reason)"
        case .badReceipt(let reason): "the collector's receipt is not trusted: \(reason)"
        }
    }
}

/// The pipeline as a whole: backoff after outages, pauses, and health. Pure; times are monotonic.
public struct DeliveryPipeline: Sendable, Hashable {
    /// Consecutive batch-level failures (outages, refused credentials).
    public private(set) var failures = 0
    /// When the current outage began.
    public private(set) var outageSince: Duration?
    /// No attempt before this.
    public private(set) var pausedUntil: Duration = .zero
    /// Why the last attempt failed.
    public private(set) var lastError: String?
    /// Set while the backend refuses the credentials.
    public private(set) var unauthorized = false
    /// Set while the last failure was at the network level (no HTTP answer at all).
    public private(set) var networkDown = false
    /// Whether a reachability probe already ended a pause since the backend last answered a batch. A probe that
    /// connects but is followed by another failed batch proves only that the backend answers a `GET`: from then on
    /// the schedule alone decides, until a batch is answered.
    public private(set) var probeSpent = false
    /// Why the collector's copy is held back, while it is (health `failing`).
    public private(set) var hold: DeliveryHold?

    /// Creates a pipeline with no history.
    public init() {}

    /// Whether an attempt may start at `now`.
    public func mayAttempt(at now: Duration) -> Bool { now >= pausedUntil }

    /// The backend answered (a hold stays until ``releaseHold()``).
    public mutating func recordAnswer() {
        failures = 0
        outageSince = nil
        pausedUntil = .zero
        lastError = hold?.description
        unauthorized = false
        networkDown = false
        probeSpent = false
    }

    /// Whether a reachability probe may end the pause at `now`: only a pause after a network-level failure (no HTTP
    /// answer), and only once until a batch is answered, so a backend that answers a `GET` but fails every batch
    /// gets the schedule, not a resend every probe interval.
    public func mayProbe(at now: Duration) -> Bool {
        networkDown && !probeSpent && !mayAttempt(at: now)
    }

    /// A reachability probe connected: end the pause now (the failure count stays, so a new failure backs off
    /// further). Once until the next answered batch.
    public mutating func resumeAfterProbe() {
        guard !probeSpent else { return }
        pausedUntil = .zero
        networkDown = false
        probeSpent = true
    }

    /// The collector's copy cannot advance (``DeliveryHold``): health `failing` until ``releaseHold()``. A hold
    /// does not pause the pipeline by itself: a refused entry waits its own backoff while the rest is delivered,
    /// and an answer that is not trusted is paused as an outage (``recordOutage(at:reason:retryAfter:unit:policy:network:)``).
    public mutating func setHold(_ hold: DeliveryHold) {
        self.hold = hold
        lastError = hold.description
    }

    /// The collector took what held it back (accepted the refused entry, sent a receipt that verifies).
    public mutating func releaseHold() {
        guard hold != nil else { return }
        hold = nil
        lastError = nil
    }

    /// The backend was unreachable or failing as a whole.
    /// - Parameter unit: a random number in 0 ..< 1 for the jitter.
    /// - Returns: the delay before the next attempt.
    @discardableResult
    public mutating func recordOutage(
        at now: Duration,
        reason: String,
        retryAfter: Duration?,
        unit: Double,
        policy: DeliveryPolicy,
        network: Bool = false
    ) -> Duration {
        failures += 1
        networkDown = network
        if outageSince == nil { outageSince = now }
        lastError = reason
        // Retry-After may lengthen the pause, never shorten it: a date in the past or a 0 means "no earlier than
        // the schedule", so a backend (or a proxy) cannot make the agent resend in a tight loop.
        var delay = policy.jitteredDelay(afterFailures: failures, unit: unit)
        if let retryAfter { delay = max(delay, retryAfter) }
        if isFailOpen(at: now, policy: policy) { delay = min(delay, policy.probeInterval) }
        pausedUntil = now + delay
        return delay
    }

    /// The backend refused the credentials: pause for the probe interval, count nothing against entries.
    @discardableResult
    public mutating func recordUnauthorized(at now: Duration, reason: String, policy: DeliveryPolicy) -> Duration {
        unauthorized = true
        networkDown = false
        lastError = "credentials refused: \(reason)"
        failures += 1
        pausedUntil = now + policy.probeInterval
        return policy.probeInterval
    }

    /// The health at `now` with `pending` entries waiting and the collector's verified copy `lag` behind.
    /// - Parameter lagging: whether ``ReceiptLag/isLagging(now:policy:)`` says the verified copy is behind.
    public func health(
        pending: Int,
        lagging: Bool = false,
        at now: Duration,
        policy: DeliveryPolicy
    ) -> DeliveryHealth {
        if hold != nil { return .failing }
        if isFailOpen(at: now, policy: policy) { return .failOpen }
        if let since = outageSince, now - since > policy.maxDelay { return .degraded }
        if unauthorized || pending > policy.degradedPending || lagging { return .degraded }
        return .healthy
    }

    private func isFailOpen(at now: Duration, policy: DeliveryPolicy) -> Bool {
        outageSince.map { now - $0 >= policy.failOpenAfter } ?? false
    }
}
