import AuditAgent
import AuditChain
import AuditClient
import AuditStore
import Foundation
import TestKit
import Testing

/// A producer's retry through the client is harmless (issue 31): after a lost answer and a restart of the agent it
/// answers the original seq; and the client's event under a key that a request without `occurredAt` took first is
/// refused, not taken for that request's retry.
@Suite struct AuditClientRetryTests {
    @Test func aRetryAfterALostAnswerAndARestartOfTheAgentMakesOneEntry() async throws {
        let dir = try ClientTempDir()
        let configuration = ClientTestAgent.configuration(dir)
        let proxy = try AgentProxy(path: dir.file("proxy.sock"), target: ClientTestAgent.socket(dir), dropAnswers: 1)
        defer { proxy.stop() }
        let client = try AuditClientAgentTests.client(proxy.path)
        let event = ClientTestAgent.critical("lost-then-restart")
        try await ClientTestAgent.withAgent(configuration) { agent in
            // The agent committed it; the answer was lost.
            await AuditClientAgentTests.expectFailure(.agentUnavailable) { _ = try await client.send(event) }
            let stored = try ClientTestAgent.events(agent.log)
            #expect(stored.count == 1)
        }
        #expect(await client.bufferedCount == 1)
        try await ClientTestAgent.withAgent(configuration) { agent in
            // The retry carries the same key and time: the restarted agent answers the original seq.
            let delivered = try await client.flush()
            #expect(delivered.map(\.seq) == [1])
            #expect(try ClientTestAgent.events(agent.log).map(\.event) == [event])
            #expect(await client.bufferedCount == 0)
        }
    }

    @Test func theClientsEventUnderTheKeyOfARequestWithoutOccurredAtIsRefused() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            // Another producer's request without occurredAt, twice (stamped differently): one entry.
            let request =
                #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","idempotencyKey":"shared","#
                + #""attributes":{"unlockDurationMs":412}}"#
            for stamp: Int64 in [1_795_000_000_000, 1_795_000_000_500] {
                let events = try AuditEvent.decodeProducerInput(
                    Array(request.utf8),
                    catalogue: .builtIn,
                    now: AuditTimestamp(millisecondsSinceEpoch: stamp),
                    makeIdempotencyKey: { "unused" }
                )
                #expect(try await agent.log.append(events).map(\.seq) == [1])
            }
            // The client always sends its occurredAt: a different request under the key, refused and not retried.
            let client = try AuditClientAgentTests.client(ClientTestAgent.socket(dir))
            let error = await AuditClientAgentTests.expectFailure(.conflict) {
                _ = try await client.send(ClientTestAgent.routine("shared", at: 1_795_000_000_500))
            }
            #expect(error?.agentCode == "differentEvent")
            #expect(await client.bufferedCount == 0)
            #expect(try ClientTestAgent.events(agent.log).count == 1)
            // Its own retries are recognised as ever.
            let own = ClientTestAgent.routine("own")
            #expect(try await client.send(own) == 2)
            #expect(try await client.send(own) == 2)
        }
    }
}
