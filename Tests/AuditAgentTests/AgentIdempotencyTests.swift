import AuditAgent
import AuditChain
import AuditStore
import Foundation
import Testing
import TestKit

/// The ingest API de-duplicates on the idempotency key: a producer's retry answers the original seq and writes
/// nothing (no entry, nothing more to deliver), concurrently and across a restart of the agent.
@Suite struct AgentIdempotencyTests {
    /// An event with a producer-chosen key and time (a retry repeats both).
    static func event(key: String, duration: Int = 412) -> String {
        #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","#
            + #""occurredAt":"2026-11-21T10:00:00Z","idempotencyKey":"\#(key)","#
            + #""attributes":{"unlockDurationMs":\#(duration)}}"#
    }

    /// The event entries of a log, and its delivery rows.
    static func counts(_ log: AuditLog) throws -> (events: Int, delivery: Int) {
        (try AgentHarness.events(log).count, try log.storage.deliveryTable().items.count)
    }

    @Test func retryAnswersTheOriginalSeqAndWritesNothing() async throws {
        let dir = try AgentTempDir()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let first = try await client.post("/v1/events", Self.event(key: "retry-1"))
            #expect(first.status == 200)
            #expect(first.json["seqs"] as? [Int] == [1])
            #expect(first.json["duplicates"] == nil)
            let before = try Self.counts(agent.log)
            let retry = try await client.post("/v1/events", Self.event(key: "retry-1"))
            #expect(retry.status == 200)
            #expect(retry.json["seqs"] as? [Int] == [1])
            #expect(retry.json["duplicates"] as? Int == 1)
            let after = try Self.counts(agent.log)
            #expect(after.events == 1 && after.events == before.events && after.delivery <= before.delivery)

            // JSON Lines repeating a key within the body: one entry, both lines answer its seq.
            let lines = Self.event(key: "line-a") + "\n" + Self.event(key: "line-a") + "\n"
            let batch = try await client.post("/v1/events", lines)
            #expect(batch.status == 200)
            #expect(batch.json["seqs"] as? [Int] == [2, 2])
            #expect(batch.json["duplicates"] as? Int == 1)
        }
    }

    @Test func concurrentPostsOfOneKeyOverTheSocketMakeOneEntry() async throws {
        let dir = try AgentTempDir()
        var configuration = AgentHarness.configuration(dir)
        configuration.listen = nil
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let client = AgentHTTPClient(target: .unix(try #require(endpoints.socketPath)))
            let replies = try await withThrowingTaskGroup(of: AgentHTTPClient.Reply.self) { group in
                for _ in 0..<24 {
                    group.addTask { try await client.post("/v1/events", Self.event(key: "storm")) }
                }
                var all: [AgentHTTPClient.Reply] = []
                for try await reply in group { all.append(reply) }
                return all
            }
            #expect(replies.allSatisfy { $0.status == 200 && $0.json["seqs"] as? [Int] == [1] })
            #expect(replies.count { $0.json["duplicates"] == nil } == 1)
            #expect(try AgentHarness.events(agent.log).count == 1)
        }
    }

    @Test func retryAfterARestartOfTheAgentMakesNoSecondEntry() async throws {
        let dir = try AgentTempDir()
        let configuration = AgentHarness.configuration(dir)
        try await AgentHarness.withAgent(configuration) { _, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            #expect(try await client.post("/v1/events", Self.event(key: "restart")).json["seqs"] as? [Int] == [1])
        }
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let retry = try await client.post("/v1/events", Self.event(key: "restart"))
            #expect(retry.status == 200)
            #expect(retry.json["seqs"] as? [Int] == [1])
            #expect(try AgentHarness.events(agent.log).count == 1)
        }
    }

    /// The README's first event with a key and without `occurredAt`: the agent stamps each arrival.
    static func unstamped(key: String, duration: Int = 412) -> String {
        #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","idempotencyKey":"\#(key)","#
            + #""attributes":{"unlockDurationMs":\#(duration)}}"#
    }

    @Test func aRequestWithoutOccurredAtRepeatedIsARetryAlsoAfterARestart() async throws {
        let dir = try AgentTempDir()
        let configuration = AgentHarness.configuration(dir)
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let first = try await client.post("/v1/events", Self.unstamped(key: "readme"))
            #expect(first.status == 200 && first.json["seqs"] as? [Int] == [1])
            // Later, so the agent's stamp differs: still the original.
            try await Task.sleep(for: .milliseconds(5))
            let retry = try await client.post("/v1/events", Self.unstamped(key: "readme"))
            #expect(retry.status == 200, "\(retry.text)")
            #expect(retry.json["seqs"] as? [Int] == [1])
            #expect(retry.json["duplicates"] as? Int == 1)
            // A different event under the key is refused, with or without occurredAt.
            let other = try await client.post("/v1/events", Self.unstamped(key: "readme", duration: 7))
            #expect(other.status == 409 && other.json["code"] as? String == "differentEvent")
            #expect(other.json["seq"] as? Int == 1)
            let timed = try await client.post("/v1/events", Self.event(key: "readme"))
            #expect(timed.status == 409 && timed.json["code"] as? String == "differentEvent")
            #expect(try AgentHarness.events(agent.log).count == 1)
        }
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let retry = try await client.post("/v1/events", Self.unstamped(key: "readme"))
            #expect(retry.status == 200, "\(retry.text)")
            #expect(retry.json["seqs"] as? [Int] == [1])
            let other = try await client.post("/v1/events", Self.unstamped(key: "readme", duration: 7))
            #expect(other.status == 409 && other.json["code"] as? String == "differentEvent")
            #expect(try AgentHarness.events(agent.log).count == 1)
        }
    }

    @Test func sameKeyWithAnotherEventIs409NamingTheOriginalSeq() async throws {
        let dir = try AgentTempDir()
        let lines = AgentHarness.Lines()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir), lines: lines) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            #expect(try await client.post("/v1/events", Self.event(key: "secret-ish-key")).status == 200)
            let body = Self.event(key: "other") + "\n" + Self.event(key: "secret-ish-key", duration: 7) + "\n"
            let refused = try await client.post("/v1/events", body)
            #expect(refused.status == 409)
            #expect(refused.json["code"] as? String == "differentEvent")
            #expect(refused.json["seq"] as? Int == 1)
            #expect(refused.json["event"] as? Int == 2)
            #expect(!refused.text.contains("secret-ish-key"))
            #expect(try AgentHarness.events(agent.log).count == 1)
            // The agent stays up, and the refused body's other key is still free.
            #expect(try await client.post("/v1/events", Self.event(key: "other")).json["seqs"] as? [Int] == [2])
        }
        #expect(!lines.all.contains { $0.contains("secret-ish-key") })
    }
}
