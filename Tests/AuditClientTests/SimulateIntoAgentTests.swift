import AuditAgent
import AuditChain
import AuditCollector
import AuditStore
import Foundation
import TestKit
import Testing

/// `auditctl simulate --agent SOCKET`: producer → AuditClient → agent → collector in one command.
@Suite struct SimulateIntoAgentTests {
    /// The built `auditctl` beside the test binary.
    static let auditctl: String = {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path + "/auditctl"
    }()

    /// Runs `auditctl` on a thread of its own (it blocks while the in-process agent answers on the pool).
    static func auditctl(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try ChildProcess.run(
                            auditctl,
                            arguments,
                            environment: ["PATH": "/usr/bin:/bin"],
                            stdin: nil,
                            timeout: 300
                        )
                    }
                )
            }.start()
        }
    }

    @Test func theSimulatorsEventsReachTheCollectorThroughTheAgentAndItsCopyVerifies() async throws {
        let collectorDir = try CollectorTempDir(engine: .sqlite)
        let dir = try ClientTempDir()
        try await withCollector(collectorDir, token: "client-test-token") { client, collector in
            var configuration = ClientTestAgent.configuration(dir)
            configuration.backend = URL(string: "http://127.0.0.1:\(client.port)")
            configuration.token = "client-test-token"
            try await ClientTestAgent.withAgent(configuration) { agent in
                let result = try await Self.auditctl([
                    "simulate", "--agent", ClientTestAgent.socket(dir), "--users", "3", "--sessions", "4", "--json",
                ])
                let stdout = String(decoding: result.stdout, as: UTF8.self)
                #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
                let summary = try JSONValue(parsing: Array(result.stdout)).objectValue
                let total = try #require(summary?["total"]?.integerValue, "\(stdout)")
                let stored = try ClientTestAgent.events(agent.log)
                #expect(stored.count == Int(total))
                #expect(total > 12)
                // Every event once.
                #expect(Set(stored.map(\.event.idempotencyKey)).count == stored.count)

                // The agent delivers to the collector (bounded wait), whose copy verifies against the log's key.
                let info = try agent.log.info()
                var held: UInt64?
                for _ in 0..<1200 {
                    held = try await collector.store.head(logId: info.logId)?.seq
                    if held == info.head.seq { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(held == info.head.seq)
                let entries = try await collector.store.entries(logId: info.logId)
                var options = ChainVerifier.Options(trustedKeys: try agent.log.keys.allSigningKeys().map(\.publicKey))
                options.dataKeys = try agent.log.keys.allDataKeys()
                var verifier = ChainVerifier(options: options)
                for entry in entries { verifier.consume(entry.bytes) }
                let report = verifier.finish()
                #expect(report.isClean, "\(report.problems.prefix(5))")
                #expect(report.entriesChecked == Int(info.head.seq) + 1)
                #expect(report.payloadsOpened >= stored.count)
            }
        }
    }

    @Test func anUnreachableAgentAtStartExitsWith2() async throws {
        let dir = try ClientTempDir()
        let result = try await Self.auditctl(["simulate", "--agent", dir.file("none.sock"), "--users", "1"])
        #expect(result.status == 2)
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(stderr.contains("no agent answers at \(dir.file("none.sock"))"))
        #expect(stderr.contains("ERR-107-090"))
        let both = try await Self.auditctl(["simulate", "--agent", "/a.sock", "--agent-url", "http://127.0.0.1:1"])
        #expect(both.status == 2)
        #expect(String(decoding: both.stderr, as: UTF8.self).contains("either --agent or --agent-url"))
        let remote = try await Self.auditctl(["simulate", "--agent-url", "http://10.1.2.3:8080"])
        #expect(String(decoding: remote.stderr, as: UTF8.self).contains("no TLS and no authentication"))
    }
}
