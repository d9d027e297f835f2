import AuditAgent
import AuditServerKit
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The agent's listeners answer what they cannot serve instead of resetting it (issue 31, item 7; the guard is
/// `ConnectionGuard` of AuditServerKit): a connection beyond the limits gets a complete 503 with `Retry-After`, an
/// oversize request head a 400, and either is then closed by the server. Real sockets on an in-process agent.
@Suite struct ListenerAnswerTests {
    /// A 503 with `Retry-After` and `Connection: close`, complete (its head ended by a blank line).
    static func isUnavailableAnswer(_ text: String) -> Bool {
        let head = text.lowercased()
        return head.hasPrefix("http/1.1 503") && head.contains("\r\nretry-after: \(ServerLimits.retryAfterSeconds)\r\n")
            && head.contains("\r\nconnection: close\r\n") && head.contains("\r\n\r\n")
    }

    @Test func aConnectionOverThePeersLimitWhileEveryOneIsBusyIsAnswered503AndClosed() async throws {
        let directory = try AgentTempDir()
        var configuration = AgentHarness.configuration(directory)
        configuration.limits = ServerLimits(
            headerTimeout: .seconds(3600),
            bodyTimeout: .seconds(3600),
            maxConnections: 16,
            maxConnectionsPerPeer: 2
        )
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let target = SlowClients.Target.tcp(port: try #require(endpoints.tcpPort), sources: ["127.0.0.1"])
            // Two requests whose bodies are awaited: busy, not evictable.
            let busyHead = "POST /v1/events HTTP/1.1\r\nHost: busy\r\nContent-Length: 1000\r\n\r\n{"
            let clients = try await SlowClients.open(2, to: target, head: busyHead)
            defer { clients.closeAll() }
            #expect(
                await pollUntil {
                    agent.connections.tcp.stats.awaitingRequest == 0 && agent.connections.tcp.stats.open == 2
                }
            )
            try await clients.add(1, to: target, head: "POST /v1/events HTTP/1.1\r\nHost: third\r\n")
            #expect(await pollUntil { clients.received(2).closed })
            let third = clients.received(2)
            #expect(Self.isUnavailableAnswer(third.text), "\(third.text)")
            #expect(!third.reset)
            #expect(agent.connections.tcp.stats.refused == 1)
            // The busy ones are untouched.
            #expect(!clients.received(0).closed && !clients.received(1).closed)
        }
    }

    @Test func anEvictedConnectionIsAnswered503AndTheNewOneIsServed() async throws {
        let directory = try AgentTempDir()
        var configuration = AgentHarness.configuration(directory)
        configuration.limits = ServerLimits(headerTimeout: .seconds(3600), maxConnections: 2)
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let socket = try #require(endpoints.socketPath)
            let slow = try await SlowClients.open(2, to: .unix(socket))
            defer { slow.closeAll() }
            #expect(await pollUntil { agent.connections.unix.stats.admitted == 2 })
            let reply = try await AgentHTTPClient(target: .unix(socket)).post("/v1/events", AgentHarness.event())
            #expect(reply.status == 200, "\(reply.text)")
            // The older slow connection made room (which one is older is the order the server admitted them in):
            // answered, then closed by the server; the other is held.
            #expect(await pollUntil { slow.received(0).closed || slow.received(1).closed })
            let (first, second) = (slow.received(0), slow.received(1))
            #expect(first.closed != second.closed, "\(first) \(second)")
            let evicted = first.closed ? first : second
            #expect(Self.isUnavailableAnswer(evicted.text), "\(evicted.text)")
            #expect(!evicted.reset)
            #expect(agent.connections.unix.stats.evicted == 1)
        }
    }

    @Test func anOversizeRequestHeadIsAnswered400AndTheConnectionClosed() async throws {
        let directory = try AgentTempDir()
        var configuration = AgentHarness.configuration(directory)
        // No deadline frees the connection while the test waits: only the close after the 400 can.
        configuration.limits = ServerLimits(
            headerTimeout: .seconds(3600),
            bodyTimeout: .seconds(3600),
            idleTimeout: .seconds(3600),
            maxConnections: 16
        )
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let socket = try #require(endpoints.socketPath)
            // One header field over the decoder's 80 KiB.
            let head = "POST /v1/events HTTP/1.1\r\nHost: big\r\nX-Big: " + String(repeating: "a", count: 100_000)
            let client = try await SlowClients.open(1, to: .unix(socket), head: head + "\r\n\r\n")
            defer { client.closeAll() }
            #expect(await pollUntil { client.received(0).closed })
            let answer = client.received(0)
            #expect(answer.text.hasPrefix("HTTP/1.1 400"), "\(answer.text.prefix(200))")
            #expect(!answer.reset)
            // Closed by the server though the client keeps its end open: nothing held, nothing left closing.
            #expect(
                await pollUntil { agent.connections.unix.stats.open == 0 && agent.connections.unix.stats.closing == 0 }
            )
        }
    }
}

/// 500 producers posting at once to one listener, more than it holds (256 on the unix socket, 64 per TCP peer): every
/// one gets an answer (its event stored, or a 503 with `Retry-After`), none a reset, and each that retries after its
/// 503 gets its event stored. Runs with the other flood suites (scripts/test sets AUDIT_FLOOD_TESTS).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["AUDIT_FLOOD_TESTS"] != nil))
struct ListenerFloodAnswerTests {
    static let producers = 500

    /// Posts one event per producer in `pending`, all at once (a thread each); returns the producers answered 503
    /// with `Retry-After`, and those that got no answer (a reset or an end of stream: only a connection closed at
    /// once past ``ServerLimits/maxClosing`` may, which the caller checks). Records an issue for another status.
    static func postAtOnce(
        _ pending: [Int],
        to target: AgentHTTPClient.Target
    ) async -> (unavailable: [Int], unanswered: [Int]) {
        await withTaskGroup(of: (Int, Result<AgentHTTPClient.Reply, any Error>).self) { group in
            for producer in pending {
                group.addTask {
                    let event = AgentHarness.event(user: "producer-\(producer)")
                    do {
                        return (producer, .success(try await AgentHTTPClient(target: target).post("/v1/events", event)))
                    } catch {
                        return (producer, .failure(error))
                    }
                }
            }
            var unavailable: [Int] = []
            var unanswered: [Int] = []
            for await (producer, outcome) in group {
                switch outcome {
                case .success(let reply) where reply.status == 200:
                    continue
                case .success(let reply) where reply.status == 503:
                    #expect(reply.headers["retry-after"] == "\(ServerLimits.retryAfterSeconds)", "\(reply.headers)")
                    unavailable.append(producer)
                case .success(let reply):
                    Issue.record("\(target): producer \(producer) got \(reply.status): \(reply.text)")
                case .failure:
                    unanswered.append(producer)
                }
            }
            return (unavailable, unanswered)
        }
    }

    /// - Parameters:
    ///   - listener: `unix` or `tcp` (the producers all from 127.0.0.1).
    ///   - slow: slow connections (a request line and a header line, never finished) opened first, from other
    ///     peers: with 200 the listener is past its 256 as the producers arrive, and makes room by evicting.
    @Test(arguments: ["unix", "tcp"], [0, 200])
    func fiveHundredProducersAtOnceAreEachAnsweredAndRetriesAreStored(listener: String, slow: Int) async throws {
        _ = SlowClients.affordable(4 * Self.producers + 2 * slow)
        let directory = try AgentTempDir()
        var configuration = AgentHarness.configuration(directory)
        // No slow connection times out while the test runs: only the limits act.
        configuration.limits.headerTimeout = .seconds(3600)
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let target: AgentHTTPClient.Target =
                listener == "unix" ? .unix(try #require(endpoints.socketPath)) : .tcp(try #require(endpoints.tcpPort))
            let slowTarget: SlowClients.Target =
                listener == "unix"
                ? .unix(try #require(endpoints.socketPath))
                : .tcp(port: try #require(endpoints.tcpPort), sources: (2...5).map { "127.0.0.\($0)" })
            let held = try await SlowClients.open(slow, to: slowTarget)
            defer { held.closeAll() }
            let table = listener == "unix" ? agent.connections.unix : agent.connections.tcp
            #expect(await pollUntil { table.stats.admitted >= slow })
            let before = try AgentHarness.headSeq(agent.log)
            var (pending, unanswered) = await Self.postAtOnce(Array(0..<Self.producers), to: target)
            print(
                "\(listener), \(slow) slow: \(Self.producers) producers at once, \(pending.count) answered 503, "
                    + "\(unanswered.count) unanswered, \(table.stats.closedAtOnce) closed at once"
            )
            // No answer only for a connection answered and closed at once past the closing cap, whose unread request
            // makes the kernel reset it (threat model, "Listeners under connection floods").
            var noAnswer = unanswered.count
            // Each answered 503 (or, past the cap, nothing) tries again after its Retry-After, until stored (the cap,
            // many rounds, is for a listener that never makes room).
            pending += unanswered
            var rounds = 0
            while !pending.isEmpty, rounds < 100 {
                rounds += 1
                try await Task.sleep(for: .seconds(ServerLimits.retryAfterSeconds))
                let again = await Self.postAtOnce(pending, to: target)
                pending = again.unavailable + again.unanswered
                noAnswer += again.unanswered.count
            }
            #expect(
                noAnswer <= table.stats.closedAtOnce,
                "\(noAnswer) unanswered, \(table.stats.closedAtOnce) closed at once"
            )
            #expect(pending.isEmpty, "\(pending.count) producers still answered 503 after \(rounds) rounds")
            #expect(try AgentHarness.headSeq(agent.log) == before + UInt64(Self.producers))
        }
    }
}
