/// The health of delivery.
public enum DeliveryHealth: String, Sendable, Hashable {
    /// Delivering.
    case healthy
    /// More than `degradedPending` pending, the backend unreachable beyond the backoff maximum, or credentials
    /// refused.
    case degraded
    /// The backend unreachable for `failOpenAfter`: events go on into the local encrypted log; the backend is
    /// probed at the probe interval and sync resumes by itself when it answers.
    case failOpen
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

    /// Creates a pipeline with no history.
    public init() {}

    /// Whether an attempt may start at `now`.
    public func mayAttempt(at now: Duration) -> Bool { now >= pausedUntil }

    /// The backend answered.
    public mutating func recordAnswer() {
        failures = 0
        outageSince = nil
        pausedUntil = .zero
        lastError = nil
        unauthorized = false
        networkDown = false
    }

    /// A reachability probe connected: end the pause now (the failure count stays, so a new failure backs off
    /// further).
    public mutating func resumeAfterProbe() {
        pausedUntil = .zero
        networkDown = false
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
        var delay = policy.jitteredDelay(afterFailures: failures, unit: unit)
        if let retryAfter { delay = retryAfter }
        if health(pending: 0, at: now, policy: policy) == .failOpen { delay = min(delay, policy.probeInterval) }
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

    /// The health at `now` with `pending` entries waiting.
    public func health(pending: Int, at now: Duration, policy: DeliveryPolicy) -> DeliveryHealth {
        if let since = outageSince {
            let down = now - since
            if down >= policy.failOpenAfter { return .failOpen }
            if down > policy.maxDelay { return .degraded }
        }
        if unauthorized || pending > policy.degradedPending { return .degraded }
        return .healthy
    }
}
