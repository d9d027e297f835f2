import AuditAgent
import AuditChain
import AuditCollector
import AuditStore
import Foundation
import TestKit
import Logging
import Testing

/// The Prometheus endpoint and delivery through the agent to a collector.
@Suite struct AgentMetricsTests {
    static let families = [
        "auditd_pending_entries", "auditd_dlq_entries", "auditd_awaiting_record_entries",
        "auditd_dropped_entries_total", "auditd_sync_latency_seconds",
        "auditd_delivered_entries_total", "auditd_sync_requests_total", "auditd_health",
        "auditd_last_success_timestamp_seconds",
    ]

    /// The value of the sample line starting with `prefix` (name and labels).
    static func sample(_ text: String, _ prefix: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }
            .flatMap { Double($0.split(separator: " ").last!) }
    }

    @Test func metricsEndpointExposesEveryFamilyWithHelpAndType() async throws {
        let dir = try AgentTempDir()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { _, endpoints in
            let ingest = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let metrics = AgentHTTPClient(target: .tcp(try #require(endpoints.metricsPort)))
            let before = try #require(Self.sample(try await metrics.get("/metrics").text, "auditd_pending_entries"))
            #expect(
                try await ingest.post("/v1/events", AgentHarness.event() + "\n" + AgentHarness.event()).status == 200
            )
            let reply = try await metrics.get("/metrics")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            for name in Self.families {
                #expect(reply.text.contains("# HELP \(name) "))
                #expect(reply.text.contains("# TYPE \(name) "))
            }
            #expect(Self.sample(reply.text, "auditd_pending_entries") == before + 2)
            #expect(Self.sample(reply.text, "auditd_awaiting_record_entries") == 0)
            #expect(Self.sample(reply.text, "auditd_dropped_entries_total{reason=\"fifo\"}") == 0)
            #expect(try await metrics.get("/other").status == 404)
            #expect(try await metrics.post("/metrics", "").status == 405)
        }
    }

    @Test func renderingFollowsTheExpositionFormat() {
        var metrics = AgentMetrics(
            pending: 7,
            dlq: 2,
            dropped: ["fifo": 3, "custom\"reason": 1],
            health: "degraded",
            lastSuccess: "2026-11-21T10:00:00.250Z",
            lastLatency: .milliseconds(1250),
            deliveredTotal: 40,
            requestsTotal: 3,
            awaitingRecord: 4
        )
        let text = metrics.text
        #expect(text.contains("auditd_pending_entries 7\n"))
        #expect(text.contains("auditd_dlq_entries 2\n"))
        #expect(text.contains("# TYPE auditd_awaiting_record_entries gauge\n"))
        #expect(text.contains("auditd_awaiting_record_entries 4\n"))
        #expect(text.contains("# TYPE auditd_dropped_entries_total counter\n"))
        #expect(text.contains("auditd_dropped_entries_total{reason=\"fifo\"} 3\n"))
        #expect(text.contains("auditd_dropped_entries_total{reason=\"expired\"} 0\n"))
        #expect(text.contains("auditd_dropped_entries_total{reason=\"custom\\\"reason\"} 1\n"))
        #expect(text.contains("auditd_sync_latency_seconds 1.250\n"))
        #expect(text.contains("auditd_delivered_entries_total 40\n"))
        #expect(text.contains("auditd_sync_requests_total 3\n"))
        #expect(text.contains("auditd_health{state=\"degraded\"} 1\n"))
        #expect(text.contains("auditd_health{state=\"healthy\"} 0\n"))
        #expect(text.contains("auditd_health{state=\"failOpen\"} 0\n"))
        #expect(text.contains("auditd_last_success_timestamp_seconds 1795255200.250\n"))
        #expect(text.hasSuffix("\n"))

        // A version 1 log: the epoch families have no sample.
        #expect(text.contains("# TYPE auditd_epoch_stale gauge\n") && !text.contains("auditd_epoch_stale 0"))
        metrics.epoch = ChainRules.EpochState(
            number: 4,
            startsAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_255_200_250),
            epochSeconds: 600,
            recordSeq: 9
        )
        metrics.epochStale = true
        #expect(metrics.text.contains("auditd_epoch 4\n"))
        #expect(metrics.text.contains("auditd_epoch_start_timestamp_seconds 1795255200.250\n"))
        #expect(metrics.text.contains("auditd_epoch_stale 1\n"))

        metrics.health = "unknown"
        metrics.lastSuccess = nil
        metrics.lastLatency = nil
        #expect(!metrics.text.contains("auditd_health{state=\"healthy\"} 1"))
        #expect(metrics.text.contains("auditd_sync_latency_seconds NaN\n"))
        #expect(metrics.text.contains("auditd_last_success_timestamp_seconds 0\n"))
    }

    @Test func awaitingRecordComesFromTheQueue() async throws {
        let dir = try AgentTempDir()
        let log = try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: KeyStore(directory: dir.file("keys"), credentialsDirectory: nil),
            deviceId: "d"
        )
        _ = try await log.deliveryTransaction { table, _ in table.items[0]?.state = .removed }
        let metrics = try await AgentMetrics.collect(log: log, engine: nil, policy: .init())
        #expect(metrics.awaitingRecord == 1)
        #expect(metrics.text.contains("auditd_awaiting_record_entries 1\n"))
    }

    @Test func agentDeliversToACollectorAndCountsIt() async throws {
        let dir = try AgentTempDir()
        var collectorSettings = CollectorConfiguration(databasePath: dir.file("collector.sqlite"))
        collectorSettings.port = 0
        collectorSettings.token = "agent-test-token"
        let server = try await CollectorServer(
            configuration: collectorSettings,
            logger: Logger(label: "collector-test")
        )
        let port = AsyncStream<Int>.makeStream()
        let collector = Task { try await server.run { port.continuation.yield($0) } }
        defer { collector.cancel() }
        var ports = port.stream.makeAsyncIterator()
        let collectorPort = try #require(await ports.next())

        var configuration = AgentHarness.configuration(dir)
        configuration.backend = URL(string: "http://127.0.0.1:\(collectorPort)")
        configuration.token = "agent-test-token"
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            #expect(agent.engine != nil)
            try await AgentHarness.postThreeAndWaitDelivered(endpoints)
            let text = try await AgentHTTPClient(target: .tcp(try #require(endpoints.metricsPort))).get("/metrics").text
            #expect((Self.sample(text, "auditd_delivered_entries_total") ?? 0) >= 3)
            #expect((Self.sample(text, "auditd_sync_requests_total") ?? 0) >= 1)
            #expect((Self.sample(text, "auditd_last_success_timestamp_seconds") ?? 0) > 0)
            #expect(Self.sample(text, "auditd_health{state=\"healthy\"}") == 1)
            #expect(Self.sample(text, "auditd_sync_latency_seconds")?.isNaN == false)
        }
        collector.cancel()
        _ = try? await collector.value
    }
}
