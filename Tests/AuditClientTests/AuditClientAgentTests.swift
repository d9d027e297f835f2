import AuditAgent
import AuditChain
import AuditClient
import AuditServerKit
import BiometricUnlock
import BiometricUnlockClient
import Foundation
import Synchronization
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The client against a real agent over its unix socket: acknowledgements, an agent stopped and restarted, overflow,
/// a lost answer, refusals, the buffer file.
@Suite struct AuditClientAgentTests {
    static func client(
        _ socket: String,
        capacity: Int = 1000,
        bufferFile: String? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) throws -> AuditClient {
        var configuration = AuditClientConfiguration(socketPath: socket)
        configuration.capacity = capacity
        configuration.bufferFile = bufferFile
        configuration.reportDeviceId = "test-host"
        // The suite's other tests share this process's concurrency pool with the agent.
        configuration.requestTimeout = .seconds(120)
        return try AuditClient(configuration: configuration, clock: clock)
    }

    /// Expects `body` to throw the client's error with `code`; returns it.
    @discardableResult
    static func expectFailure(
        _ code: AuditClientError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async -> AuditClientError? {
        do {
            try await body()
            Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as AuditClientError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    @Test func eventsAreAcknowledgedWithTheirSeqsAfterTheCommit() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let client = try Self.client(ClientTestAgent.socket(dir))
            try await client.checkAgent()
            let one = client.event(
                type: "BIOMETRIC_AUTH_SUCCESS",
                userId: "alice",
                deviceId: "phone-1",
                attributes: ["unlockDurationMs": 412]
            )
            #expect(try await client.send(one) == 1)
            let batch = (0..<3).map { ClientTestAgent.routine("batch-\($0)") }
            #expect(try await client.send(batch) == [2, 3, 4])
            // An event without a key gets one when it enters the client.
            #expect(try await client.send(ClientTestAgent.routine("")) == 5)
            let stored = try ClientTestAgent.events(agent.log)
            #expect(stored.map(\.seq) == [1, 2, 3, 4, 5])
            #expect(stored[0].event == one)
            #expect(stored[1...3].map(\.event.idempotencyKey) == ["batch-0", "batch-1", "batch-2"])
            #expect(!stored[4].event.idempotencyKey.isEmpty)
            #expect(await client.bufferedCount == 0)
        }
    }

    @Test func theAgentsLoopbackTCPListenerWorksToo() async throws {
        let dir = try ClientTempDir()
        var configuration = ClientTestAgent.configuration(dir)
        configuration.socketEnabled = false
        configuration.listen = ListenAddress(host: "127.0.0.1", port: 0)
        try await ClientTestAgent.withAgent(configuration) { agent in
            let port = try #require(agent.listening.tcpPort)
            var settings = AuditClientConfiguration(endpoint: .loopback(host: "127.0.0.1", port: port))
            settings.requestTimeout = .seconds(120)
            let client = try AuditClient(configuration: settings)
            try await client.checkAgent()
            #expect(
                try await client.send([ClientTestAgent.routine("tcp-1"), ClientTestAgent.critical("tcp-2")]) == [1, 2]
            )
            #expect(try ClientTestAgent.events(agent.log).map(\.event.idempotencyKey) == ["tcp-1", "tcp-2"])
        }
    }

    @Test func eventsBufferedWhileTheAgentIsDownAreDeliveredOnceAfterItsRestart() async throws {
        let dir = try ClientTempDir()
        let configuration = ClientTestAgent.configuration(dir)
        let clocks = ManualClocks()
        let client = try Self.client(ClientTestAgent.socket(dir), clock: clocks)
        let first = try await ClientTestAgent.withAgent(configuration) { _ in
            try await client.send(ClientTestAgent.routine("before"))
        }
        #expect(first == 1)
        // The agent is stopped: ERR-107-090, the events are kept.
        let error = await Self.expectFailure(.agentUnavailable) {
            _ = try await client.send([ClientTestAgent.routine("down-1"), ClientTestAgent.critical("down-2")])
        }
        #expect(error?.code.identifier == "ERR-107-090")
        #expect(error?.buffered == 2)
        try await client.enqueue(ClientTestAgent.routine("down-3"))
        #expect(await client.bufferedCount == 3)
        // The retry loop tries, fails, and waits its first backoff (1 s on the manual clock).
        let retries = Task { await client.run() }
        defer { retries.cancel() }
        for _ in 0..<6000 where clocks.sleepers == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(clocks.sleepers == 1)
        try await ClientTestAgent.withAgent(configuration) { agent in
            clocks.advance(.seconds(1))
            for _ in 0..<6000 where await client.bufferedCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(await client.bufferedCount == 0)
            // A flush after delivery sends nothing more.
            #expect(try await client.flush().isEmpty)
            let stored = try ClientTestAgent.events(agent.log)
            #expect(stored.map(\.event.idempotencyKey) == ["before", "down-1", "down-2", "down-3"])
        }
    }

    @Test func overflowDropsTheOldestRoutineEventsAndTheAgentSealsTheirCount() async throws {
        let dir = try ClientTempDir()
        let client = try Self.client(ClientTestAgent.socket(dir), capacity: 3)
        // No agent yet: everything is buffered; r1 and r2 (routine, oldest) make room for the later ones.
        try await client.enqueue(ClientTestAgent.routine("r1", at: 1_795_000_000_001))
        try await client.enqueue(ClientTestAgent.critical("c1", at: 1_795_000_000_002))
        try await client.enqueue(ClientTestAgent.routine("r2", at: 1_795_000_000_003))
        let error = await Self.expectFailure(.agentUnavailable) {
            _ = try await client.send([ClientTestAgent.routine("r3"), ClientTestAgent.routine("r4")])
        }
        #expect(error?.buffered == 3)
        #expect(await client.unreportedDrops == [.overflow: 2])
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            // The next successful send carries the report first; the backlog follows.
            #expect(try await client.send(ClientTestAgent.routine("r5")) == 2)
            #expect(await client.unreportedDrops.isEmpty)
            #expect(await client.bufferedCount == 0)
            let stored = try ClientTestAgent.events(agent.log)
            #expect(stored.map(\.event.type).first == "AUDIT_EVENTS_DROPPED")
            let report = try #require(stored.first?.event)
            #expect(report.attributes["count"] == .integer(2))
            #expect(report.attributes["critical"] == .integer(0))
            #expect(report.attributes["reason"] == .string("overflow"))
            #expect(report.attributes["firstOccurredAt"] == .string("2026-11-18T11:06:40.001Z"))
            #expect(report.attributes["lastOccurredAt"] == .string("2026-11-18T11:06:40.003Z"))
            #expect(report.deviceId == "test-host")
            #expect(Set(stored.dropFirst().map(\.event.idempotencyKey)) == ["r5", "c1", "r3", "r4"])
        }
    }

    @Test func aRetryAfterALostAnswerMakesOneEntry() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let proxy = try AgentProxy(
                path: dir.file("proxy.sock"),
                target: ClientTestAgent.socket(dir),
                dropAnswers: 1
            )
            defer { proxy.stop() }
            let client = try Self.client(proxy.path)
            let event = ClientTestAgent.critical("lost-answer")
            // The agent committed it; the answer was lost: the client keeps it and says ERR-107-090.
            await Self.expectFailure(.agentUnavailable) { _ = try await client.send(event) }
            let dropped = proxy.counts.withLock { $0.dropped }
            #expect(dropped == 1)
            #expect(try ClientTestAgent.events(agent.log).count == 1)
            #expect(await client.bufferedCount == 1)
            // The retry carries the same key and time: the agent answers the original seq and writes nothing.
            let delivered = try await client.flush()
            #expect(delivered.map(\.seq) == [1])
            #expect(delivered.map(\.event) == [event])
            #expect(try ClientTestAgent.events(agent.log).map(\.event) == [event])
            #expect(await client.bufferedCount == 0)
        }
    }

    @Test func refusedEventsAreNotRetriedAndARefusedBufferedEventIsAccounted() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let client = try Self.client(ClientTestAgent.socket(dir))
            var bad = ClientTestAgent.routine("bad")
            bad.type = "NO_SUCH_EVENT"
            let refusal = await Self.expectFailure(.refused) {
                _ = try await client.send([ClientTestAgent.routine("good"), bad])
            }
            #expect(refusal?.agentCode == "unknownType")
            #expect(refusal?.line == 2)
            // Only the refused event is not kept: the valid one of its request waits in the buffer.
            #expect(refusal?.kept.map(\.idempotencyKey) == ["good"])
            #expect(await client.bufferedCount == 1)
            #expect(try ClientTestAgent.events(agent.log).isEmpty)
            #expect(try await client.flush().map(\.seq) == [1])
            // A key reused for another event: 409, not retried.
            #expect(try await client.send(ClientTestAgent.routine("reused")) == 2)
            var other = ClientTestAgent.routine("reused")
            other.userId = "mallory"
            await Self.expectFailure(.conflict) { _ = try await client.send(other) }
            #expect(await client.bufferedCount == 0)
            // A buffered event the agent refuses leaves the buffer, counted and reported first in the next request;
            // the rest goes through.
            try await client.enqueue(bad)
            try await client.enqueue(ClientTestAgent.routine("kept"))
            let delivered = try await client.flush()
            #expect(delivered.map(\.event.idempotencyKey) == ["kept"])
            #expect(await client.unreportedDrops.isEmpty)
            #expect(await client.bufferedCount == 0)
            #expect(try await client.flush().isEmpty)
            let stored = try ClientTestAgent.events(agent.log)
            #expect(
                stored.map(\.event.type) == [
                    "BIOMETRIC_AUTH_SUCCESS", "BIOMETRIC_AUTH_SUCCESS", "AUDIT_EVENTS_DROPPED",
                    "BIOMETRIC_AUTH_SUCCESS",
                ]
            )
            #expect(stored.map(\.event.idempotencyKey).first == "good")
            #expect(stored.map(\.event.idempotencyKey).last == "kept")
            let report = try #require(stored.dropFirst(2).first?.event)
            #expect(report.attributes["reason"] == .string("refused"))
            #expect(report.attributes["count"] == .integer(1))
        }
    }

    @Test func aRequestTooLargeForTheAgentIsSplitNotDropped() async throws {
        let dir = try ClientTempDir()
        var configuration = ClientTestAgent.configuration(dir)
        // Room for two events of about 170 bytes per request.
        configuration.maxBodyBytes = 400
        try await ClientTestAgent.withAgent(configuration) { agent in
            let client = try Self.client(ClientTestAgent.socket(dir))
            for index in 0..<5 { try await client.enqueue(ClientTestAgent.routine("big-\(index)")) }
            let delivered = try await client.flush()
            #expect(delivered.map(\.event.idempotencyKey) == (0..<5).map { "big-\($0)" })
            #expect(await client.unreportedDrops.isEmpty)
            #expect(try ClientTestAgent.events(agent.log).count == 5)
            let sent = try await client.send((5..<10).map { ClientTestAgent.routine("big-\($0)") })
            #expect(sent == [6, 7, 8, 9, 10])
            // One event over the limit alone: AuditClientAnswerTests.anEventTooLargeAloneIsKeptAndRetriedNotDropped.
        }
    }

    @Test func theBufferFileIsPrivateAndSurvivesARestartOfTheProducer() async throws {
        let dir = try ClientTempDir()
        let file = dir.file("client-buffer.json")
        do {
            let client = try Self.client(ClientTestAgent.socket(dir), capacity: 2, bufferFile: file)
            await Self.expectFailure(.agentUnavailable) {
                _ = try await client.send([
                    ClientTestAgent.routine("f1"), ClientTestAgent.routine("f2"), ClientTestAgent.critical("f3"),
                ])
            }
        }
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A new client (the producer restarted) finds the events, the drop and their keys.
        let reloaded = try Self.client(ClientTestAgent.socket(dir), capacity: 2, bufferFile: file)
        #expect(await reloaded.bufferedCount == 2)
        #expect(await reloaded.unreportedDrops == [.overflow: 1])
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let delivered = try await reloaded.flush()
            #expect(delivered.map(\.event.idempotencyKey) == ["f2", "f3"])
            let stored = try ClientTestAgent.events(agent.log)
            #expect(
                stored.map(\.event.type) == [
                    "AUDIT_EVENTS_DROPPED", "BIOMETRIC_AUTH_SUCCESS", "BIOMETRIC_AUTH_FAILURE",
                ]
            )
        }
        let empty = try Self.client(ClientTestAgent.socket(dir), bufferFile: file)
        #expect(await empty.bufferedCount == 0)
        #expect(await empty.unreportedDrops.isEmpty)

        // Readable by others: refused. Malformed: refused.
        chmod(file, 0o644)
        let unsafe = await Self.expectFailure(.bufferFile) { _ = try Self.client("/nonexistent", bufferFile: file) }
        #expect(unsafe?.message.contains("chmod 600") == true)
        chmod(file, 0o600)
        try Data("{\"format\":\"audit-client-buffer\",\"version\":1,\"events\":[{\"type\":\"X\"}]".utf8)
            .write(to: URL(fileURLWithPath: file))
        await Self.expectFailure(.bufferFile) { _ = try Self.client("/nonexistent", bufferFile: file) }
        try Data(
            "{\"format\":\"audit-client-buffer\",\"version\":1,\"reports\":[],\"drops\":[],\"events\":[{\"type\":\"X\",\"userId\":\"u\",\"deviceId\":\"d\",\"attributes\":{}}]}"
                .utf8
        ).write(to: URL(fileURLWithPath: file))
        let keyless = await Self.expectFailure(.bufferFile) { _ = try Self.client("/nonexistent", bufferFile: file) }
        #expect(keyless?.message.contains("idempotencyKey") == true)
    }

    @Test func settingsOutsideLoopbackOrTheBoundsAreRefused() async {
        for endpoint in [
            AuditClientConfiguration.Endpoint.loopback(host: "10.0.0.1", port: 8080),
            .loopback(host: "127.0.0.1", port: 0), .unixSocket(""),
        ] {
            await Self.expectFailure(.invalidConfiguration) {
                _ = try AuditClient(configuration: AuditClientConfiguration(endpoint: endpoint))
            }
        }
        var configuration = AuditClientConfiguration(socketPath: "/tmp/x.sock")
        configuration.capacity = 0
        await Self.expectFailure(.invalidConfiguration) { _ = try AuditClient(configuration: configuration) }
        configuration.capacity = 10
        configuration.backoff = []
        await Self.expectFailure(.invalidConfiguration) { _ = try AuditClient(configuration: configuration) }
        #expect(AuditClientConfiguration(socketPath: "/s").backoff(afterFailures: 1) == .seconds(1))
        #expect(AuditClientConfiguration(socketPath: "/s").backoff(afterFailures: 5) == .seconds(300))
        #expect(AuditClientConfiguration(socketPath: "/s").backoff(afterFailures: 99) == .seconds(300))
    }

    @Test func anEventNoAgentCouldSealIsRefusedAtOnceAndNeverBuffered() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { _ in
            let client = try Self.client(ClientTestAgent.socket(dir))
            var huge = ClientTestAgent.critical("huge")
            huge.attributes["note"] = .string(String(repeating: "x", count: AuditClient.maxSealableEventBytes))
            let ordinary = ClientTestAgent.critical("ordinary")
            let refused = await Self.expectFailure(.refused) { _ = try await client.send([ordinary, huge]) }
            #expect(refused?.line == 2)
            #expect(refused?.kept.isEmpty == true && refused?.committed.isEmpty == true)
            await Self.expectFailure(.refused) { try await client.enqueue(huge) }
            #expect(await client.bufferedCount == 0)
            // Nothing waits behind it: the next events go through.
            #expect(try await client.send([ordinary]).count == 1)
        }
    }

    @Test func theUnlockSinkReportsERR107090AndKeepsTheEventOnce() async throws {
        let dir = try ClientTempDir()
        let client = try Self.client(ClientTestAgent.socket(dir))
        let sink = ClientAuditSink(client: client)
        let event = ClientTestAgent.critical("sink-1")
        for _ in 0..<2 {
            await Self.expectFailure(.agentUnavailable) { try await sink.record(event) }
        }
        #expect(await client.bufferedCount == 1)
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            try await sink.record(event)
            #expect(await client.bufferedCount == 0)
            #expect(try ClientTestAgent.events(agent.log).map(\.event) == [event])
            #expect(await sink.written == ["BIOMETRIC_AUTH_FAILURE": 1])
        }
    }
}
