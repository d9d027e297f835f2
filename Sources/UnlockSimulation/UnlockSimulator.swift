public import BiometricUnlock
public import AuditChain

/// Drives ``BiometricUnlockController``s through realistic, seeded unlock sessions and sends their events to an
/// ``AuditSink``: the event streams of demos and benchmarks (`auditctl simulate`).
///
/// Each of ``users`` users (`user-1` ... `user-N`) has one device (`device-1` ...) with its own controller and
/// in-memory platform doubles. Every choice (how long the user is away, what the biometric prompt answers, whether
/// the password is mistyped, reboots, password changes, biometric set changes, enabling and disabling) is drawn
/// from one ``SplitMix64`` seeded with ``seed``; sessions run in a fixed order (session 1 of every user, then
/// session 2, ...), each call awaited before the next; clocks start at ``startTime`` and move only by drawn amounts;
/// idempotency keys are sequential (`sim-SEED-user-I-K`). So the same seed gives the same events, byte for byte.
///
/// The sessions cover biometric successes and failures, lockouts after three failures, cancelled prompts, an
/// unavailable sensor, the user choosing the password, wrong and right passwords, giving up, background, lock and
/// inactivity timeouts, reboots (`DEVICE_BOOT`), relaunches, long absences (`TIMEOUT_EXCEEDED`), password changes
/// (`PASSWORD_CHANGED`), biometric set changes (`BIOMETRIC_REVOKED_SYSTEM_CHANGE`) followed by re-enabling, and
/// enabling and disabling biometric unlock. Every password typed (to unlock or to enable, right or mistyped) gives
/// its `PASSWORD_AUTH_SUCCESS` or `PASSWORD_AUTH_FAILURE`.
///
/// No I/O except through the sink.
public struct UnlockSimulator: Sendable {
    /// 2026-01-01T00:00:00Z, where every device's clock starts by default.
    public static let defaultStartTime = AuditTimestamp(millisecondsSinceEpoch: 1_767_225_600_000)

    /// Simulated users, one device each.
    public var users: Int
    /// Sessions per user.
    public var sessionsPerUser: Int
    /// The seed of every choice.
    public var seed: UInt64
    /// The wall time every device's clock starts at.
    public var startTime: AuditTimestamp
    /// Whether the run stops after the session in which the sink first failed (the events that were still pending
    /// are then offered once more and counted in ``UnlockSimulationSummary/undeliveredEvents`` if refused). Default
    /// true: a stream with a gap is no use for a demo or a benchmark.
    public var stopsAtFirstAuditFailure = true

    /// Creates a simulator.
    public init(users: Int, sessionsPerUser: Int, seed: UInt64, startTime: AuditTimestamp = defaultStartTime) {
        self.users = users
        self.sessionsPerUser = sessionsPerUser
        self.seed = seed
        self.startTime = startTime
    }

    /// Runs every session and returns what happened. Stops early (between sessions) if the task is cancelled.
    public func run(into sink: any AuditSink) async -> UnlockSimulationSummary {
        var summary = UnlockSimulationSummary(seed: seed, users: users, sessionsPerUser: sessionsPerUser)
        var random = SimulationRandom(seed: seed)
        let counting = CountingAuditSink(wrapping: sink)
        let devices = (0..<max(0, users)).map { index in
            SimulatedDevice(number: index + 1, seed: seed, startTime: startTime, sink: counting, random: &random)
        }
        sessions: for _ in 0..<max(0, sessionsPerUser) {
            for device in devices {
                if Task.isCancelled || (stopsAtFirstAuditFailure && !summary.auditFailures.isEmpty) {
                    break sessions
                }
                await device.runSession(&random, &summary)
                summary.sessions += 1
            }
        }
        for device in devices { await device.close(&summary) }
        summary.eventCounts = counting.counts
        return summary
    }
}
