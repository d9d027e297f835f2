import AuditAgent
import AuditChain
import AuditCollector
import AuditServerKit
import Foundation
import Testing
import AuditStore
import TestKit

/// The collector under connections that never finish a request (issue 20, item 5): real sockets on loopback.
/// A flood suite: runs when AUDIT_FLOOD_TESTS is set (scripts/test sets it), so that a quick `swift test` skips it.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["AUDIT_FLOOD_TESTS"] != nil))
struct CollectorSlowConnectionTests {
    /// Runs a collector with `limits` on 127.0.0.1, port 0, for the duration of `body`.
    static func withServer<T: Sendable>(
        _ directory: CollectorTempDir,
        limits: ServerLimits,
        _ body: (Int, CollectorServer) async throws -> T
    ) async throws -> T {
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.port = 0
        configuration.limits = limits
        let server = try await CollectorServer(configuration: configuration)
        return try await serveGracefully(server) { port in try await body(port, server) }
    }

    @Test func aNewAgentDeliversWhileAThousandSlowConnectionsAreOpen() async throws {
        let count = SlowClients.affordable(1000)
        var limits = ServerLimits()
        // Long enough that no slow connection times out during the test: only the connection limits act.
        limits.headerTimeout = .seconds(300)
        let directory = CollectorTempDir()
        try await Self.withServer(directory, limits: limits) { port, server in
            // 40 peers of 25 connections each: every peer under its limit (32), together far over the total (512).
            let sources = (2...41).map { "127.0.0.\($0)" }
            let slow = try await SlowClients.open(count, to: .tcp(port: port, sources: sources))
            defer { slow.closeAll() }
            #expect(await pollUntil { server.connections.stats.admitted >= count })
            await slow.drip()
            let held = server.connections.stats
            #expect(held.open <= limits.maxConnections)
            #expect(held.open >= min(count, limits.maxConnections) - 10)
            #expect(held.timedOut == 0)

            let agentDirectory = try AgentTempDir()
            var configuration = AgentHarness.configuration(agentDirectory)
            configuration.backend = URL(string: "http://127.0.0.1:\(port)")
            try await AgentHarness.withAgent(configuration) { agent, endpoints in
                let reply = try await AgentHTTPClient(target: .unix(try #require(endpoints.socketPath)))
                    .post("/v1/events", AgentHarness.event())
                #expect(reply.status == 200)
                let device = try agent.log.info().head
                // Delivered through the flood, however long a loaded machine takes: the cap only ends a test whose
                // listener is held for good. How fast is the bench's business.
                let delivered = try await pollUntil {
                    try await server.collector.store.head(logId: device.logId)?.seq == device.seq
                }
                #expect(
                    delivered,
                    "the collector's head did not reach seq \(device.seq) with \(count) slow connections"
                )
            }
            // The slow connections were held, not timed out: the limits alone made room.
            #expect(server.connections.stats.timedOut == 0)
            #expect(server.connections.stats.evicted >= count - limits.maxConnections)
        }
    }

    @Test func aPeerHoldsAtMostItsLimitAndItsOldestSlowConnectionsMakeRoom() async throws {
        var limits = ServerLimits(maxConnections: 64, maxConnectionsPerPeer: 8)
        limits.headerTimeout = .seconds(300)
        limits.bodyTimeout = .seconds(300)
        let directory = CollectorTempDir()
        try await Self.withServer(directory, limits: limits) { port, server in
            let table = server.connections
            // Slow heads from one peer, one at a time: the newest 8 are held, the oldest were closed to make room.
            let slow = SlowClients()
            defer { slow.closeAll() }
            for opened in 1...12 {
                try await slow.add(1, to: .tcp(port: port, sources: ["127.0.0.7"]))
                #expect(await pollUntil { table.stats.admitted == opened })
            }
            #expect(table.count(peer: "127.0.0.7") == 8)
            #expect(await pollUntil { (0..<4).allSatisfy(slow.isClosedByServer) })
            #expect(!(4..<12).contains(where: slow.isClosedByServer))
            #expect(table.stats.evicted == 4)

            // Requests whose body is awaited are busy: at the peer's limit, a new connection is refused (answered 503).
            let busyHead =
                "POST /v1/audit/events HTTP/1.1\r\nHost: busy\r\nContent-Type: application/json\r\n"
                + "Content-Length: 1000\r\n\r\n{"
            let busy = SlowClients()
            defer { busy.closeAll() }
            try await busy.add(8, to: .tcp(port: port, sources: ["127.0.0.8"]), head: busyHead)
            #expect(await pollUntil { table.stats.open == 16 && table.stats.awaitingRequest == 8 })
            try await busy.add(2, to: .tcp(port: port, sources: ["127.0.0.8"]), head: busyHead)
            #expect(await pollUntil { table.stats.refused == 2 })
            // Refused with an answer, not a reset: a 503 with Retry-After, then the server closes.
            #expect(await pollUntil { busy.received(8).closed && busy.received(9).closed })
            for refused in [busy.received(8), busy.received(9)] {
                #expect(ListenerAnswerTests.isUnavailableAnswer(refused.text), "\(refused.text)")
                #expect(!refused.reset)
            }
            #expect(!(0..<8).contains(where: busy.isClosedByServer))
            #expect(table.count(peer: "127.0.0.8") == 8)

            // Another peer is served meanwhile.
            let reply = try await AgentHTTPClient(target: .tcp(port)).get("/v1/collector/key")
            #expect(reply.status == 200)
        }
    }

    @Test func slowHeadsSlowBodiesAndIdleKeepAlivesAreClosed() async throws {
        let limits = ServerLimits(
            headerTimeout: .seconds(1),
            bodyTimeout: .seconds(1),
            idleTimeout: .seconds(1),
            maxConnections: 512,
            maxConnectionsPerPeer: 64
        )
        let directory = CollectorTempDir()
        try await Self.withServer(directory, limits: limits) { port, server in
            let target = SlowClients.Target.tcp(port: port, sources: ["127.0.0.1"])
            let heads = try await SlowClients.open(20, to: target)
            let bodies = try await SlowClients.open(
                5,
                to: target,
                head: "POST /v1/audit/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"v\":"
            )
            let idle = try await SlowClients.open(
                5,
                to: target,
                head: "GET /v1/collector/key HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            defer { [heads, bodies, idle].forEach { $0.closeAll() } }
            await heads.drip()
            #expect(await pollUntil { heads.closedByServer() == 20 })
            #expect(await pollUntil { bodies.closedByServer() == 5 })
            #expect(await pollUntil { idle.closedByServer() == 5 })
            #expect(await pollUntil { server.connections.stats.open == 0 })
            #expect(server.connections.stats.timedOut == 30)
        }
    }
}
