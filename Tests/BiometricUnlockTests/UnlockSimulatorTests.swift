import AuditChain
import BiometricUnlock
import Synchronization
import Testing
import UnlockSimulation
import TestKit

/// The unlock simulator: deterministic per seed, covering every behaviour the simulation promises, and honest in its
/// summary.
@Suite("UnlockSimulator")
struct UnlockSimulatorTests {
    /// Runs a simulation into a fresh in-memory sink.
    func simulate(
        users: Int,
        sessions: Int,
        seed: UInt64
    ) async -> (events: [AuditEvent], summary: UnlockSimulationSummary) {
        let sink = InMemoryAuditSink()
        let summary = await UnlockSimulator(users: users, sessionsPerUser: sessions, seed: seed).run(into: sink)
        return (sink.events, summary)
    }

    @Test("the same seed gives the same events, byte for byte; another seed gives others")
    func deterministic() async {
        let first = await simulate(users: 3, sessions: 20, seed: 42)
        let second = await simulate(users: 3, sessions: 20, seed: 42)
        #expect(!first.events.isEmpty)
        #expect(first.events == second.events)
        #expect(first.events.map(\.canonicalPayload) == second.events.map(\.canonicalPayload))
        #expect(first.summary == second.summary)

        let other = await simulate(users: 3, sessions: 20, seed: 43)
        #expect(!other.events.isEmpty)
        #expect(other.events != first.events)
    }

    @Test("5 users x 50 sessions cover every behaviour, and every event passes the catalogue")
    func coverage() async throws {
        let (events, _) = await simulate(users: 5, sessions: 50, seed: 1)
        try #require(!events.isEmpty)

        let types = Set(events.map(\.type))
        #expect(
            types
                == [
                    "BIOMETRIC_ENABLED", "BIOMETRIC_DISABLED", "BIOMETRIC_AUTH_SUCCESS", "BIOMETRIC_AUTH_FAILURE",
                    "BIOMETRIC_REVOKED_SYSTEM_CHANGE", "PASSWORD_AUTH_FALLBACK", "PASSWORD_AUTH_SUCCESS",
                    "PASSWORD_AUTH_FAILURE",
                ]
        )
        let passwordReasons = Set(
            events.filter { $0.type == "PASSWORD_AUTH_SUCCESS" || $0.type == "PASSWORD_AUTH_FAILURE" }
                .compactMap(reason)
        )
        #expect(
            passwordReasons.isSuperset(of: ["FIRST_UNLOCK", "LOCKOUT", "BIOMETRIC_ENROLLMENT"]),
            "\(passwordReasons)"
        )
        let failures = events.filter { $0.type == "PASSWORD_AUTH_FAILURE" }
        #expect(failures.allSatisfy { $0.attributes["errorCode"] == "ERR-107-010" }, "below the throttling threshold")
        let fallbackReasons = Set(events.filter { $0.type == "PASSWORD_AUTH_FALLBACK" }.compactMap(reason))
        let expectedReasons: [PasswordReason] = [
            .lockout, .deviceBoot, .passwordChanged, .biometricRevoked, .timeoutExceeded, .firstUnlock,
            .promptCancelled, .userChosePassword,
        ]
        for expected in expectedReasons {
            #expect(fallbackReasons.contains(expected.rawValue), "no PASSWORD_AUTH_FALLBACK {reason: \(expected)}")
        }
        #expect(Set(events.filter { $0.type == "BIOMETRIC_DISABLED" }.compactMap(reason)) == ["USER_REQUEST"])
        let attempts = Set(events.filter { $0.type == "BIOMETRIC_AUTH_FAILURE" }.map { $0.attributes["attemptCount"] })
        #expect(attempts == [.integer(1), .integer(2), .integer(3)])

        for event in events {
            #expect(throws: Never.self, "\(event.type) \(event.attributes)") {
                try EventCatalogue.builtIn.validate(event)
            }
        }
        #expect(Set(events.map(\.userId)) == Set((1...5).map { "user-\($0)" }))
        #expect(events.allSatisfy { $0.deviceId == "device-" + $0.userId.dropFirst("user-".count) })
        #expect(Set(events.map(\.idempotencyKey)).count == events.count, "idempotency keys are unique")
    }

    @Test("per user, the events follow the flow: lockout after a third failure, re-enabling after a revocation")
    func perUserFlow() async {
        let (events, _) = await simulate(users: 5, sessions: 50, seed: 1)
        var reEnabledAfterRevocation = false
        var lockouts = 0
        for user in (1...5).map({ "user-\($0)" }) {
            let own = events.filter { $0.userId == user }
            #expect(
                zip(own, own.dropFirst()).allSatisfy { $0.occurredAt <= $1.occurredAt },
                "\(user)'s events are in time order"
            )
            #expect(
                own.map(\.idempotencyKey) == own.indices.map { "sim-1-\(user)-\($0 + 1)" },
                "\(user)'s keys are sequential"
            )
            for (index, event) in own.enumerated() {
                if event.type == "BIOMETRIC_AUTH_FAILURE", event.attributes["attemptCount"] == .integer(3) {
                    lockouts += 1
                    let next = own.indices.contains(index + 1) ? own[index + 1] : nil
                    #expect(next?.type == "PASSWORD_AUTH_FALLBACK" && next.flatMap(reason) == "LOCKOUT")
                }
                if event.type == "BIOMETRIC_REVOKED_SYSTEM_CHANGE",
                    own[(index + 1)...].contains(where: { $0.type == "BIOMETRIC_ENABLED" })
                {
                    reEnabledAfterRevocation = true
                }
            }
        }
        #expect(lockouts > 0)
        #expect(reEnabledAfterRevocation)
    }

    @Test("the summary counts exactly the events recorded")
    func summaryMatchesEvents() async {
        let (events, summary) = await simulate(users: 5, sessions: 50, seed: 1)
        var counts: [String: Int] = [:]
        for event in events { counts[event.type, default: 0] += 1 }
        #expect(summary.eventCounts == counts)
        #expect(summary.totalEvents == events.count)
        #expect(summary.sessions == 250)
        #expect(summary.seed == 1 && summary.users == 5 && summary.sessionsPerUser == 50)
        #expect(summary.biometricUnlocks == counts["BIOMETRIC_AUTH_SUCCESS"])
        #expect(summary.biometricUnlocks > 0)
        #expect(summary.passwordUnlocks > 0)
        #expect(summary.rejectedPasswords > 0)
        let unlocksByPassword = events.filter {
            $0.type == "PASSWORD_AUTH_SUCCESS" && reason($0) != "BIOMETRIC_ENROLLMENT"
        }
        #expect(summary.passwordUnlocks == unlocksByPassword.count, "each password unlock is logged")
        #expect(summary.rejectedPasswords == counts["PASSWORD_AUTH_FAILURE"], "each wrong password is logged")
        #expect(summary.auditFailures.isEmpty)
        #expect(summary.undeliveredEvents == 0)
        #expect(summary.isComplete)
    }

    @Test("a sink that is down: the run stops after the first failed session and says what was not delivered")
    func sinkDown() async {
        let sink = InMemoryAuditSink()
        sink.isAvailable = false
        let summary = await UnlockSimulator(users: 3, sessionsPerUser: 10, seed: 5).run(into: sink)
        #expect(summary.sessions == 1)
        #expect(sink.events.isEmpty)
        #expect(summary.eventCounts.isEmpty)
        #expect(!summary.auditFailures.isEmpty)
        #expect(summary.auditFailures.allSatisfy { $0.code == .auditUnavailable })
        #expect(summary.undeliveredEvents > 0)
        #expect(!summary.isComplete)
    }

    @Test("a sink that fails now and then changes nothing in the events (fail open), only when they arrive")
    func flakySink() async {
        let reference = await simulate(users: 3, sessions: 30, seed: 9)
        let flaky = FlakySink(failingAttempts: [3, 40, 41, 97])
        var simulator = UnlockSimulator(users: 3, sessionsPerUser: 30, seed: 9)
        simulator.stopsAtFirstAuditFailure = false
        let summary = await simulator.run(into: flaky)
        #expect(summary.auditFailures.count == 4)
        #expect(summary.undeliveredEvents == 0)
        #expect(summary.eventCounts == reference.summary.eventCounts)
        let events = flaky.events
        #expect(Set(events) == Set(reference.events))
        for user in ["user-1", "user-2", "user-3"] {
            #expect(events.filter { $0.userId == user } == reference.events.filter { $0.userId == user })
        }
    }

    @Test("no users or no sessions: nothing happens")
    func empty() async {
        let none = await simulate(users: 0, sessions: 10, seed: 1)
        #expect(none.events.isEmpty && none.summary.sessions == 0)
        let noSessions = await simulate(users: 2, sessions: 0, seed: 1)
        #expect(noSessions.events.isEmpty && noSessions.summary.sessions == 0)
    }

    /// The `reason` attribute.
    func reason(_ event: AuditEvent) -> String? { event.attributes["reason"]?.stringValue }
}

/// A sink that refuses the calls with the given (1-based) attempt numbers.
private final class FlakySink: AuditSink, Sendable {
    private struct Contents {
        var events: [AuditEvent] = []
        var attempts = 0
    }

    struct Refused: Error {}

    private let failingAttempts: Set<Int>
    private let contents = Mutex(Contents())

    init(failingAttempts: Set<Int>) {
        self.failingAttempts = failingAttempts
    }

    var events: [AuditEvent] { contents.withLock { $0.events } }

    func record(_ event: AuditEvent) async throws {
        try contents.withLock { (contents: inout Contents) throws(Refused) in
            contents.attempts += 1
            if failingAttempts.contains(contents.attempts) { throw Refused() }
            contents.events.append(event)
        }
    }
}
