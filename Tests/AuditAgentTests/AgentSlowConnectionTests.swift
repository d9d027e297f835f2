import AuditAgent
import AuditServerKit
import Foundation
import Testing
import TestKit

/// The agent's listeners under connections that never finish a request (issue 20, item 8): real sockets.
/// A flood suite: runs when AUDIT_FLOOD_TESTS is set (scripts/test sets it), so that a quick `swift test` skips it.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["AUDIT_FLOOD_TESTS"] != nil))
struct AgentSlowConnectionTests {
    @Test func ingestWorksOnBothListenersWhileAThousandSlowConnectionsAreOpen() async throws {
        let count = SlowClients.affordable(1000)
        let directory = try AgentTempDir()
        var configuration = AgentHarness.configuration(directory)
        // Long enough that no slow connection times out during the test: only the connection limits act.
        configuration.limits.headerTimeout = .seconds(300)
        let limits = configuration.limits
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let tcpPort = try #require(endpoints.tcpPort)
            let socket = try #require(endpoints.socketPath)
            // 20 peers of 50: every peer under its limit (64), together far over the listener's (256).
            let sources = (2...21).map { "127.0.0.\($0)" }
            let slowTCP = try await SlowClients.open(count, to: .tcp(port: tcpPort, sources: sources))
            defer { slowTCP.closeAll() }
            let slowUnix = try await SlowClients.open(300, to: .unix(socket))
            defer { slowUnix.closeAll() }
            #expect(await pollUntil { agent.connections.tcp.stats.admitted >= count })
            #expect(await pollUntil { agent.connections.unix.stats.admitted >= 300 })
            await slowTCP.drip()
            await slowUnix.drip()
            #expect(agent.connections.tcp.stats.open <= limits.maxConnections)
            #expect(agent.connections.unix.stats.open <= limits.maxConnections)

            let before = try AgentHarness.headSeq(agent.log)
            // Each listener serves a new client through the flood: an answer, and the event sealed (the client's
            // socket timeouts are minutes, a cap for a listener held for good; how fast is the bench's business).
            for target in [AgentHTTPClient.Target.unix(socket), .tcp(tcpPort)] {
                let reply = try await AgentHTTPClient(target: target).post("/v1/events", AgentHarness.event())
                #expect(reply.status == 200, "\(target): \(reply.text)")
            }
            #expect(try AgentHarness.headSeq(agent.log) == before + 2)
            #expect(agent.connections.tcp.stats.timedOut == 0)
            #expect(agent.connections.tcp.stats.evicted >= count - limits.maxConnections)
        }
    }

    @Test func slowAndIdleConnectionsAreClosedOnEveryListener() async throws {
        let directory = try AgentTempDir()
        var configuration = AgentHarness.configuration(directory)
        configuration.limits.headerTimeout = .seconds(1)
        configuration.limits.idleTimeout = .seconds(1)
        configuration.metricsLimits.headerTimeout = .seconds(1)
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let socket = try #require(endpoints.socketPath)
            let tcp = try await SlowClients.open(
                10,
                to: .tcp(port: try #require(endpoints.tcpPort), sources: ["127.0.0.1"])
            )
            let unix = try await SlowClients.open(10, to: .unix(socket))
            let metrics = try await SlowClients.open(
                4,
                to: .tcp(port: try #require(endpoints.metricsPort), sources: ["127.0.0.1"])
            )
            let idle = try await SlowClients.open(
                3,
                to: .unix(socket),
                head: "GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            defer { [tcp, unix, metrics, idle].forEach { $0.closeAll() } }
            await tcp.drip()
            await unix.drip()
            #expect(await pollUntil { tcp.closedByServer() == 10 })
            #expect(await pollUntil { unix.closedByServer() == 10 })
            #expect(await pollUntil { metrics.closedByServer() == 4 })
            #expect(await pollUntil { idle.closedByServer() == 3 })
            #expect(agent.connections.tcp.stats.timedOut == 10)
            #expect(agent.connections.unix.stats.timedOut == 13)
            #expect(agent.connections.metrics.stats.timedOut == 4)
        }
    }
}
