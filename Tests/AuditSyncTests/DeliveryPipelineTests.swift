import AuditStore
import AuditSync
import Testing

/// The pipeline as a whole (docs/DELIVERY.md, "Limits", "Pinned entries" and "Health"): backoff after outages,
/// Retry-After, fail-open, refused credentials, the reachability probe, holds, and the health they give.
@Suite("DeliveryPipeline")
struct DeliveryPipelineTests {
    static let policy = DeliveryPolicy()
    /// The jitter unit that scales a delay by exactly 1.
    static let even = 0.5

    /// Whether two durations are within a microsecond (jitter multiplies by a `Double`).
    static func close(_ lhs: Duration, _ rhs: Duration) -> Bool {
        abs((lhs - rhs) / .microseconds(1)) < 1
    }

    @Test("a new pipeline may attempt at once, has nothing to probe and is healthy")
    func fresh() {
        let pipeline = DeliveryPipeline()
        #expect(pipeline.mayAttempt(at: .zero))
        #expect(!pipeline.mayProbe(at: .zero))
        #expect(pipeline.health(pending: 0, at: .seconds(100_000), policy: Self.policy) == .healthy)
        #expect(pipeline.failures == 0)
        #expect(pipeline.lastError == nil)
        #expect(pipeline.hold == nil)
    }

    @Test("consecutive outages wait 1, 5, 30, 60, 300 s, then 300 s again")
    func schedule() {
        var pipeline = DeliveryPipeline()
        var now = Duration.seconds(10)
        var delays: [Duration] = []
        for _ in 0..<7 {
            let delay = pipeline.recordOutage(
                at: now,
                reason: "down",
                retryAfter: nil,
                unit: Self.even,
                policy: Self.policy
            )
            #expect(pipeline.pausedUntil == now + delay)
            delays.append(delay)
            now += delay
        }
        let expected: [Duration] = [1, 5, 30, 60, 300, 300, 300].map { .seconds($0) }
        #expect(zip(delays, expected).allSatisfy { Self.close($0, $1) }, "\(delays)")
        #expect(pipeline.failures == 7)
        #expect(pipeline.lastError == "down")
    }

    @Test(
        "jitter scales a delay by 0.8 to 1.2; a unit outside 0 ..< 1 is clamped, a NaN one counts as the middle",
        arguments: [
            (0.0, 0.8), (0.25, 0.9), (0.5, 1.0), (1.0, 1.2), (-3.0, 0.8), (7.0, 1.2), (.infinity, 1.2),
            (-.infinity, 0.8), (.nan, 1.0), (.signalingNaN, 1.0),
        ]
    )
    func jitter(unit: Double, factor: Double) {
        var pipeline = DeliveryPipeline()
        let delay = pipeline.recordOutage(at: .zero, reason: "down", retryAfter: nil, unit: unit, policy: Self.policy)
        #expect(Self.close(delay, .seconds(1) * factor), "\(delay)")
    }

    @Test("no attempt before the pause ends; one exactly at its end")
    func pauseBoundary() {
        var pipeline = DeliveryPipeline()
        pipeline.recordOutage(at: .seconds(40), reason: "down", retryAfter: .seconds(20), unit: 0, policy: Self.policy)
        #expect(pipeline.pausedUntil == .seconds(60))
        #expect(!pipeline.mayAttempt(at: .seconds(60) - .nanoseconds(1)))
        #expect(pipeline.mayAttempt(at: .seconds(60)))
        // A clock reading from before the outage does not open the pause either.
        #expect(!pipeline.mayAttempt(at: .seconds(39)))
    }

    @Test(
        "Retry-After lengthens a pause and never shortens it (a 0 or a past date means: no earlier than the schedule)",
        arguments: [
            (1, Duration.seconds(120), Duration.seconds(120)),
            (1, .zero, .seconds(1)),
            (3, .seconds(2), .seconds(30)),
            (5, .seconds(301), .seconds(301)),
        ]
    )
    func retryAfter(failures: Int, retryAfter: Duration, expected: Duration) {
        var pipeline = DeliveryPipeline()
        var delay = Duration.zero
        for index in 1...failures {
            delay = pipeline.recordOutage(
                at: .seconds(index),
                reason: "HTTP 503",
                retryAfter: index == failures ? retryAfter : nil,
                unit: Self.even,
                policy: Self.policy
            )
        }
        #expect(Self.close(delay, expected), "\(delay)")
    }

    @Test("the pipeline does not cap Retry-After itself (the classifier does): an overflow-sized one does not trap")
    func hugeRetryAfter() {
        var pipeline = DeliveryPipeline()
        let huge = Duration.seconds(Int64.max)
        let delay = pipeline.recordOutage(at: .seconds(5), reason: "x", retryAfter: huge, unit: 0, policy: Self.policy)
        #expect(delay == huge)
        #expect(!pipeline.mayAttempt(at: .seconds(Int64.max)))
    }

    @Test("an outage longer than the backoff maximum (300 s) is degraded; 6 h is failOpen")
    func outageHealth() {
        var pipeline = DeliveryPipeline()
        let start = Duration.seconds(1000)
        pipeline.recordOutage(at: start, reason: "down", retryAfter: nil, unit: 0, policy: Self.policy)
        // Later failures do not move the start of the outage.
        pipeline.recordOutage(at: start + .seconds(200), reason: "down", retryAfter: nil, unit: 0, policy: Self.policy)
        #expect(pipeline.outageSince == start)
        func health(_ after: Duration) -> DeliveryHealth {
            pipeline.health(pending: 0, at: start + after, policy: Self.policy)
        }
        #expect(health(.seconds(300)) == .healthy)
        #expect(health(.seconds(300) + .milliseconds(1)) == .degraded)
        #expect(health(.seconds(6 * 3600) - .milliseconds(1)) == .degraded)
        #expect(health(.seconds(6 * 3600)) == .failOpen)
        #expect(health(.seconds(100 * 3600)) == .failOpen)
        // A reading from before the outage began (the clock went back) is neither degraded nor fail-open.
        #expect(pipeline.health(pending: 0, at: start - .seconds(7 * 3600), policy: Self.policy) == .healthy)
    }

    @Test("in fail-open the pause is at most the probe interval, even when Retry-After asks for longer")
    func failOpenCapsPause() {
        var pipeline = DeliveryPipeline()
        for index in 0..<5 {
            pipeline.recordOutage(at: .seconds(index), reason: "down", retryAfter: nil, unit: 0, policy: Self.policy)
        }
        let now = Duration.seconds(6 * 3600)
        let delay = pipeline.recordOutage(
            at: now,
            reason: "HTTP 503",
            retryAfter: .seconds(3600),
            unit: 1,
            policy: Self.policy
        )
        #expect(delay == Self.policy.probeInterval)
        #expect(pipeline.pausedUntil == now + .seconds(300))
        // A shorter delay of the schedule stays as it is.
        var short = DeliveryPipeline()
        var policy = Self.policy
        policy.failOpenAfter = .zero
        let first = short.recordOutage(at: .zero, reason: "down", retryAfter: nil, unit: Self.even, policy: policy)
        #expect(Self.close(first, .seconds(1)))
        #expect(short.health(pending: 0, at: .zero, policy: policy) == .failOpen)
    }

    @Test("an answer ends the outage: failures, pause, error and probe reset; health is healthy again")
    func answerResets() {
        var pipeline = DeliveryPipeline()
        for index in 0..<3 {
            pipeline.recordOutage(
                at: .seconds(index * 1000),
                reason: "down",
                retryAfter: nil,
                unit: 0,
                policy: Self.policy,
                network: true
            )
        }
        pipeline.resumeAfterProbe()
        pipeline.recordAnswer()
        #expect(pipeline.failures == 0)
        #expect(pipeline.outageSince == nil)
        #expect(pipeline.pausedUntil == .zero)
        #expect(pipeline.lastError == nil)
        #expect(!pipeline.networkDown)
        #expect(!pipeline.probeSpent)
        #expect(pipeline.health(pending: 0, at: .seconds(9000), policy: Self.policy) == .healthy)
        // The next outage starts the schedule over.
        let delay = pipeline.recordOutage(
            at: .seconds(9000),
            reason: "down",
            retryAfter: nil,
            unit: Self.even,
            policy: Self.policy
        )
        #expect(Self.close(delay, .seconds(1)))
    }

    @Test("refused credentials pause for the probe interval and make health degraded until an answer")
    func unauthorized() {
        var pipeline = DeliveryPipeline()
        let delay = pipeline.recordUnauthorized(at: .seconds(50), reason: "HTTP 401", policy: Self.policy)
        #expect(delay == .seconds(300))
        #expect(pipeline.pausedUntil == .seconds(350))
        #expect(pipeline.unauthorized)
        #expect(pipeline.lastError == "credentials refused: HTTP 401")
        #expect(pipeline.health(pending: 0, at: .seconds(60), policy: Self.policy) == .degraded)
        // Not a network failure: no probe shortens it.
        #expect(!pipeline.mayProbe(at: .seconds(60)))
        pipeline.recordAnswer()
        #expect(!pipeline.unauthorized)
        #expect(pipeline.health(pending: 0, at: .seconds(400), policy: Self.policy) == .healthy)
    }

    @Test("a probe ends a network-level pause once; a failure after it backs off further and is not probed again")
    func probeOnce() {
        var pipeline = DeliveryPipeline()
        pipeline.recordOutage(
            at: .zero,
            reason: "refused",
            retryAfter: nil,
            unit: Self.even,
            policy: Self.policy,
            network: true
        )
        #expect(pipeline.mayProbe(at: .milliseconds(500)))
        // Once the pause is over there is nothing to end.
        #expect(!pipeline.mayProbe(at: .seconds(1)))
        pipeline.resumeAfterProbe()
        #expect(pipeline.mayAttempt(at: .milliseconds(500)))
        #expect(pipeline.failures == 1)
        #expect(pipeline.probeSpent)
        // The batch after the probe fails again: the count went on, and the schedule alone decides.
        let delay = pipeline.recordOutage(
            at: .milliseconds(600),
            reason: "reset",
            retryAfter: nil,
            unit: Self.even,
            policy: Self.policy,
            network: true
        )
        #expect(Self.close(delay, .seconds(5)))
        #expect(!pipeline.mayProbe(at: .seconds(1)))
        pipeline.resumeAfterProbe()
        #expect(!pipeline.mayAttempt(at: .seconds(1)))
        // An answered batch makes the probe available again.
        pipeline.recordAnswer()
        pipeline.recordOutage(
            at: .seconds(10),
            reason: "refused",
            retryAfter: nil,
            unit: 0,
            policy: Self.policy,
            network: true
        )
        #expect(pipeline.mayProbe(at: .seconds(10)))
    }

    @Test("a backend that answers and asks to wait (5xx, 429, Retry-After) is never probed")
    func noProbeForAnsweringBackend() {
        var pipeline = DeliveryPipeline()
        pipeline.recordOutage(at: .zero, reason: "HTTP 503", retryAfter: .seconds(60), unit: 0, policy: Self.policy)
        #expect(!pipeline.networkDown)
        #expect(!pipeline.mayProbe(at: .seconds(1)))
        // A network failure followed by an answering outage turns probing off again.
        pipeline.recordOutage(
            at: .seconds(61),
            reason: "timeout",
            retryAfter: nil,
            unit: 0,
            policy: Self.policy,
            network: true
        )
        #expect(pipeline.mayProbe(at: .seconds(62)))
        pipeline.recordOutage(at: .seconds(62), reason: "HTTP 502", retryAfter: nil, unit: 0, policy: Self.policy)
        #expect(!pipeline.mayProbe(at: .seconds(63)))
    }

    @Test("a hold makes health failing above fail-open and degraded, without pausing; it survives answers")
    func hold() {
        var pipeline = DeliveryPipeline()
        let hold = DeliveryHold.refused(seq: 0, reason: "HTTP 503: the genesis key is not among the trusted keys")
        pipeline.setHold(hold)
        #expect(pipeline.health(pending: 0, at: .zero, policy: Self.policy) == .failing)
        #expect(pipeline.mayAttempt(at: .zero))
        #expect(pipeline.lastError == hold.description)
        pipeline.recordOutage(at: .zero, reason: "down", retryAfter: nil, unit: 0, policy: Self.policy)
        #expect(
            pipeline.health(pending: 10_000, lagging: true, at: .seconds(7 * 3600), policy: Self.policy) == .failing
        )
        pipeline.recordAnswer()
        #expect(pipeline.hold == hold)
        #expect(pipeline.lastError == hold.description)
        #expect(pipeline.health(pending: 0, at: .seconds(8 * 3600), policy: Self.policy) == .failing)
        pipeline.releaseHold()
        #expect(pipeline.hold == nil)
        #expect(pipeline.lastError == nil)
        #expect(pipeline.health(pending: 0, at: .seconds(8 * 3600), policy: Self.policy) == .healthy)
        // With the hold gone, health is what the rest says.
        #expect(pipeline.health(pending: 501, at: .seconds(8 * 3600), policy: Self.policy) == .degraded)
    }

    @Test("releasing when nothing is held keeps the last error")
    func releaseWithoutHold() {
        var pipeline = DeliveryPipeline()
        pipeline.recordOutage(at: .zero, reason: "down", retryAfter: nil, unit: 0, policy: Self.policy)
        pipeline.releaseHold()
        #expect(pipeline.lastError == "down")
    }

    @Test("a hold's description names what holds the copy back")
    func holdDescriptions() {
        let refused = DeliveryHold.refused(seq: 42, reason: "HTTP 422: invalid keyRotation record").description
        #expect(refused.contains("seq 42"))
        #expect(refused.contains("HTTP 422: invalid keyRotation record"))
        let receipt = DeliveryHold.badReceipt("the receipt names seq 9, beyond the head 7").description
        #expect(receipt.contains("not trusted"))
        #expect(receipt.contains("the receipt names seq 9, beyond the head 7"))
    }

    @Test("more than degradedPending pending, or a lagging verified copy, is degraded")
    func pendingAndLag() {
        let pipeline = DeliveryPipeline()
        #expect(pipeline.health(pending: 500, at: .zero, policy: Self.policy) == .healthy)
        #expect(pipeline.health(pending: 501, at: .zero, policy: Self.policy) == .degraded)
        #expect(pipeline.health(pending: 0, lagging: true, at: .zero, policy: Self.policy) == .degraded)
        var policy = Self.policy
        policy.degradedPending = 0
        #expect(pipeline.health(pending: 0, at: .zero, policy: policy) == .healthy)
        #expect(pipeline.health(pending: 1, at: .zero, policy: policy) == .degraded)
    }

    @Test("an empty retry schedule retries at once; it never traps")
    func emptySchedule() {
        var policy = Self.policy
        policy.retrySchedule = []
        var pipeline = DeliveryPipeline()
        let delay = pipeline.recordOutage(at: .seconds(3), reason: "down", retryAfter: nil, unit: 1, policy: policy)
        #expect(delay == .zero)
        #expect(pipeline.mayAttempt(at: .seconds(3)))
        // With no backoff maximum, any outage that lasts is degraded.
        #expect(pipeline.health(pending: 0, at: .seconds(3), policy: policy) == .healthy)
        #expect(pipeline.health(pending: 0, at: .seconds(4), policy: policy) == .degraded)
    }
}
