import AuditAgent
import AuditChain
import AuditCollector
import AuditStore
import Crypto
import Foundation
import Logging
import Testing
import TestKit

/// Agents of both format versions deliver to one collector (docs/FORMAT.md section 13.6: version 1 logs keep being
/// delivered and verified): each copy verifies offline with its own trust anchors, and the collector states a
/// version 2 log's epochs and none for a version 1 log.
@Suite struct MixedVersionDeliveryTests {
    /// The collector's copy of `logId`, verified with only `trusted`.
    static func verifyCopy(
        _ collector: Collector,
        logId: [UInt8],
        trusted: [Curve25519.Signing.PublicKey]
    ) async throws -> VerificationReport {
        var verifier = ChainVerifier(options: ChainVerifier.Options(trustedKeys: trusted))
        for entry in try await collector.store.entries(logId: logId) {
            verifier.consume(entry.bytes, storageSeq: entry.seq)
        }
        return verifier.finish()
    }

    @Test("a version 1 and a version 2 agent deliver to one collector; both copies verify")
    func bothVersionsDeliver() async throws {
        let dir = try AgentTempDir()
        let collector = Collector(
            store: try CollectorStore(path: dir.file("collector.sqlite")),
            receiptKey: .generate()
        )
        let server = CollectorServer(
            collector: collector,
            host: "127.0.0.1",
            port: 0,
            token: "agent-test-token",
            logger: Logger(label: "collector-test")
        )
        let port = AsyncStream<Int>.makeStream()
        let running = Task { try await server.run { port.continuation.yield($0) } }
        defer { running.cancel() }
        var ports = port.stream.makeAsyncIterator()
        let collectorPort = try #require(await ports.next())

        var reports: [UInt8: (logId: [UInt8], trusted: [Curve25519.Signing.PublicKey])] = [:]
        for version in [UInt8(1), 2] {
            let agentDir = try AgentTempDir()
            var configuration = AgentHarness.configuration(agentDir)
            configuration.formatVersion = version
            configuration.backend = URL(string: "http://127.0.0.1:\(collectorPort)")
            configuration.token = "agent-test-token"
            try await AgentHarness.withAgent(configuration) { _, endpoints in
                try await AgentHarness.postThreeAndWaitDelivered(endpoints)
            }
            let log = try AgentHarness.openLog(agentDir.file("state"))
            let logId = try log.info().logId
            // Version 2: the genesis key alone (no epoch ended in this short run, so it is the active one);
            // version 1: its key files.
            let trusted =
                version == 2
                ? [try log.activeSigningKey().publicKey] : try log.keys.allSigningKeys().map(\.publicKey)
            reports[version] = (logId, trusted)
        }

        for (version, log) in reports.sorted(by: { $0.key < $1.key }) {
            let report = try await Self.verifyCopy(collector, logId: log.logId, trusted: log.trusted)
            #expect(report.isClean, "version \(version): \(report.problems)")
            #expect(report.entriesChecked >= 4, "version \(version)")
            let status = try #require(try await collector.status(logId: log.logId))
            if version == 2 {
                #expect(status.epoch?.state.number == 0)
                #expect(status.epoch?.isStale(at: .now()) == false)
            } else {
                #expect(status.epoch == nil)
            }
        }
        running.cancel()
        _ = try? await running.value
    }
}
