import AuditChain
import AuditCollector
import AuditStore
import Foundation
import Testing
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// The copy the collector vouches for verifies offline (docs/PROTOCOL.md section 5.3, docs/FORMAT.md section 10
/// step 6): the built `auditd run` delivers through a proxy to the built `auditd collector`. First the collector is
/// unreachable (503) while FIFO removes the oldest pending entries; then the collector stores each batch but its
/// answer arrives after the agent's 2 s request deadline, so the agent never learns it and FIFO removes those
/// entries too; then the path is clear. One removal record then covers entries the collector never got and entries
/// it holds. The collector's head must reach the device's head, and the verifier must pass the collector's copy.
@Suite("Collector copy verifies offline", .serialized)
struct CollectorCopyVerificationTests {
    @Test("503, then answers lost after storing, then through: the collector's copy up to its head verifies")
    func lostAnswersInsideARemoval() async throws {
        let directory = try AgentTempDir()
        let state = StateDirectory(path: directory.file("state"))
        try state.create()
        let log = try await AuditLog.create(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
            deviceId: "phone-1"
        )
        let logId = try log.info().logId
        let genesisKeys = try log.keys.allSigningKeys().map(\.publicKey)

        let database = directory.file("collector.db")
        let collector = try await ServerProcess.start(
            ["collector", "--db", database, "--listen", "127.0.0.1:0", "--public-read"],
            outputPath: directory.file("collector.out")
        )
        let proxy = try FaultProxy(upstream: collector.port)
        defer { proxy.shutdown() }
        try proxy.set(.status(503))
        let socket = directory.file("ingest.sock")
        let agent = try ChildProcess.start(
            AgentProducts.path("auditd"),
            [
                "run", "--state-dir", state.path, "--socket", socket, "--backend", proxy.url.absoluteString,
                "--max-events", "20", "--request-timeout-seconds", "2", "--sync-interval-seconds", "1",
                "--retry-schedule-seconds", "1", "--jitter", "0", "--log-level", "warning",
            ],
            environment: ProcessInfo.processInfo.environment.filter {
                !$0.key.hasPrefix("AUDITD_") && $0.key != "AUDIT_STATE_DIR" && $0.key != "CREDENTIALS_DIRECTORY"
            },
            outputPath: directory.file("agent.out")
        )
        let client = AgentHTTPClient(target: .unix(socket))
        do {
            // 1. The collector answers 503: 40 events, FIFO keeps 20 pending.
            try await Self.post(40, to: client)
            #expect(await pollUntil(within: .seconds(120)) { proxy.counts["status503", default: 0] >= 2 })
            // 2. Batches stored, answers lost: 40 more events while the agent's requests time out.
            try proxy.set(.answerLate(milliseconds: 4000))
            #expect(await pollUntil(within: .seconds(120)) { proxy.counts["answerLate", default: 0] >= 1 })
            try await Self.post(40, to: client)
            #expect(await pollUntil(within: .seconds(120)) { proxy.counts["answerLate", default: 0] >= 3 })
            // 3. Through: the collector's head reaches the device's.
            try proxy.set(.passThrough)
            let deviceHead = try log.info().head.seq
            let reached = await pollUntil(within: .seconds(180)) {
                guard let head = try? await Self.collectorHead(port: collector.port, logId: logId) else { return false }
                return head >= deviceHead
            }
            #expect(reached, "the collector's head did not reach the device's head \(deviceHead)")
        } catch {
            agent.send(SIGKILL)
            _ = await agent.wait(timeout: .seconds(30))
            _ = await collector.kill9()
            throw error
        }
        agent.send(SIGTERM)
        _ = await agent.wait(timeout: .seconds(60))
        _ = await collector.terminate()

        // The collector's copy up to its head, as an investigator would read it: every problem is a false verdict.
        let store = try await CollectorConfiguration(databasePath: database).openStore()
        let head = try await store.head(logId: logId)
        let held = try await store.entries(logId: logId).filter { $0.seq <= (head?.seq ?? 0) }
        await store.close()
        var verifier = ChainVerifier(options: ChainVerifier.Options(trustedKeys: genesisKeys))
        for entry in held { verifier.consume(entry.bytes, storageSeq: entry.seq) }
        let report = verifier.finish()
        #expect(report.problems.isEmpty, "\(report.problems)")

        // The case this test is about happened: a removal record whose range holds entries the collector stored.
        let heldSeqs = Set(held.map(\.seq))
        let inside = report.accounted.filter { accounted in
            (accounted.removal.firstSeq...accounted.removal.lastSeq).contains { heldSeqs.contains($0) }
        }
        #expect(!inside.isEmpty, "no removal record covers an entry the collector holds: \(report.accounted)")
        #expect(report.accounted.contains { $0.bridgedGap })
    }

    /// Posts `count` events to the agent, one request each, and expects each acknowledged.
    static func post(_ count: Int, to client: AgentHTTPClient) async throws {
        for index in 0..<count {
            var reply = try? await client.post("/v1/events", AgentHarness.event(user: "user-\(index % 3)"))
            // The socket appears a moment after the agent starts.
            for _ in 0..<400 where reply == nil {
                try await Task.sleep(for: .milliseconds(50))
                reply = try? await client.post("/v1/events", AgentHarness.event(user: "user-\(index % 3)"))
            }
            #expect(reply?.status == 200, "\(reply?.text ?? "no answer")")
        }
    }

    /// The collector's contiguous head of `logId` (its read API), or nil while it holds nothing.
    static func collectorHead(port: Int, logId: [UInt8]) async throws -> UInt64? {
        let reply = try await AgentHTTPClient(target: .tcp(port)).get("/v1/logs/\(Hex.encode(logId))/head")
        guard reply.status == 200, let seq = reply.json["seq"] as? Int else { return nil }
        return UInt64(seq)
    }
}
