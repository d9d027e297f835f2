import AuditChain
import AuditCollector
import AuditStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
import TestKit
#endif

/// The built `auditd` killed with SIGKILL at random instants while it delivers to an in-process collector,
/// restarted, and left to finish: the collector ends with every entry exactly once.
@Suite("SyncCrash", .serialized)
struct SyncCrashTests {
    /// The `auditd` binary beside the test binary.
    static let auditd: String = {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("auditd").path
    }()

    /// Starts `auditd run` on `state` against the collector at `port`; its output is appended to `logFile`.
    static func start(state: String, port: Int, logFile: String) throws -> ChildProcess.Running {
        try ChildProcess.start(
            auditd,
            [
                "run", "--state-dir", state, "--backend", "http://127.0.0.1:\(port)",
                "--batch-size", "100", "--max-events", "100000", "--sync-interval-seconds", "1",
                "--request-timeout-seconds", "10", "--log-level", "warning",
            ],
            environment: AgentProducts.cleanEnvironment,
            outputPath: logFile
        )
    }

    /// Appends `count` routine events to the log in the state directory (while no agent runs).
    static func appendEvents(_ count: Int, state: StateDirectory) async throws {
        let log = try AuditLog(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil)
        )
        let events = (0..<count).map { index in
            AuditEvent(
                type: "BIOMETRIC_AUTH_SUCCESS",
                occurredAt: AuditTimestamp.now(),
                userId: "user-\(index % 5)",
                deviceId: "device-crash",
                attributes: ["unlockDurationMs": .integer(Int64(index))],
                idempotencyKey: UUID().uuidString
            )
        }
        for start in stride(from: 0, to: events.count, by: 500) {
            _ = try await log.append(Array(events[start..<min(start + 500, events.count)]))
        }
    }

    /// Posts one event to the agent's unix ingest socket, retrying while the listener starts up (for minutes: a cap
    /// for an agent that never listens); returns the acknowledged sequence numbers.
    static func ingest(socket: String, user: String) async throws -> [UInt64] {
        let client = AgentHTTPClient(target: .unix(socket))
        let deadline = ContinuousClock.now + .seconds(300)
        while true {
            do {
                let reply = try await client.post("/v1/events", AgentHarness.event(user: user))
                guard reply.status == 200 else { return [] }
                return (reply.json["seqs"] as? [Int] ?? []).map { UInt64($0) }
            } catch  where ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The head sequence number of the log in `state`.
    static func headSeq(_ state: StateDirectory) throws -> UInt64 {
        try AuditLog(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil)
        ).info().head.seq
    }

    @Test("SIGKILL at random instants while syncing, restart, finish: every entry exactly once, heads equal")
    func killWhileSyncing() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.auditd) else {
            Issue.record("auditd is not built at \(Self.auditd)")
            return
        }
        let directory = CollectorTempDir()
        let state = StateDirectory(path: directory.path + "/agent")
        try state.create()
        _ = try await AuditLog.create(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
            deviceId: "device-crash"
        )
        try await Self.appendEvents(1500, state: state)
        let logFile = directory.path + "/auditd.log"
        try await withCollector(directory) { client, collector in
            let logId = try AuditLog(
                storage: SQLiteLogStorage(path: state.databasePath),
                keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil)
            ).info().logId
            var kills: [String] = []
            var midSync = 0
            // Whatever happens, no agent outlives the test.
            var running: ChildProcess.Running?
            defer { running?.end() }
            var acknowledged: [UInt64] = []
            for round in 0..<5 {
                let before = try await collector.store.count(logId: logId)
                let agent = try Self.start(state: state.path, port: client.port, logFile: logFile)
                running = agent
                // Wait (bounded) until this run has delivered something, then kill it a random instant later.
                let deadline = ContinuousClock.now + .seconds(300)
                while try await collector.store.count(logId: logId) == before, ContinuousClock.now < deadline,
                    agent.isRunning
                {
                    try await Task.sleep(for: .milliseconds(5))
                }
                // A producer event through the ingest socket while the agent syncs; once acknowledged it must arrive.
                let seqs = try await Self.ingest(socket: state.path + "/ingest.sock", user: "crash-\(round)")
                #expect(seqs.count == 1, "round \(round): the ingest API did not acknowledge the event")
                acknowledged += seqs
                let delay = Int.random(in: 0...250)
                try await Task.sleep(for: .milliseconds(delay))
                agent.send(SIGKILL)
                let ended = await agent.wait(timeout: .seconds(300))
                guard ended.signaled else {
                    let output = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
                    Issue.record("round \(round): the agent exited by itself: \(output.suffix(2000))")
                    return
                }
                let after = try await collector.store.count(logId: logId)
                let total = try Int(SyncCrashTests.headSeq(state)) + 1
                if after < total { midSync += 1 }
                kills.append(
                    "round \(round): held \(before), killed \(delay) ms after progress, held \(after)/\(total)"
                )
                // New events arrive while the agent is down.
                try await Self.appendEvents(50, state: state)
            }
            // The last run finishes the job.
            let agent = try Self.start(state: state.path, port: client.port, logFile: logFile)
            running = agent
            let local = try AuditLog(
                storage: SQLiteLogStorage(path: state.databasePath),
                keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil)
            )
            // A cap for a delivery that never ends (minutes), not a measure of how fast it ends.
            let deadline = ContinuousClock.now + .seconds(600)
            var done = false
            while !done, ContinuousClock.now < deadline {
                let head = try local.info().head
                let held = try await collector.store.head(logId: logId)
                let empty = try local.storage.deliveryTable().items.isEmpty
                done = held?.seq == head.seq && empty
                if !done { try await Task.sleep(for: .milliseconds(50)) }
            }
            agent.send(SIGTERM)
            // It ends by itself (not by the wait's SIGKILL, which only ends an agent that hangs).
            #expect(await !agent.wait(timeout: .seconds(300)).signaled)
            let output = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            #expect(midSync > 0, "no kill landed while entries were still undelivered: \(kills)")
            #expect(done, "delivery did not finish; kills: \(kills); agent output: \(output.suffix(2000))")

            // Every entry exactly once, byte for byte; no fork; heads and the receipt agree.
            let info = try local.info()
            let held = try await collector.store.entries(logId: logId)
            let missing = Set(0...info.head.seq).subtracting(held.map(\.seq))
            #expect(missing.isEmpty && held.count == Int(info.head.seq) + 1, "missing \(missing.sorted().prefix(20))")
            let entries = try local.storage.entries(from: 0, through: info.head.seq, limit: Int(info.head.seq) + 1)
            let differing = zip(held, entries).filter { $0.bytes != $1.bytes }.map(\.0.seq)
            #expect(differing.isEmpty, "the collector holds other bytes at seqs \(differing.prefix(20))")
            #expect(acknowledged.count == 5 && acknowledged.allSatisfy { $0 <= info.head.seq })
            #expect(try await collector.store.forks(logId: logId).isEmpty)
            #expect(try await collector.store.chainBreaks(logId: logId).isEmpty)
            let head = try await collector.store.head(logId: logId)
            #expect(head?.seq == info.head.seq && head?.hash == info.head.hash)
            let status = try DeliveryStatus.read(local.storage)
            #expect(status.pending == 0 && status.dlq == 0 && status.dropped.isEmpty)
            #expect(status.receiptSeq == info.head.seq)
            #expect(info.head.seq >= 1500 + 5 * 50)
        }
    }
}
