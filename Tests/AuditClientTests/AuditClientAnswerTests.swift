import AuditAgent
import AuditChain
import AuditClient
import BiometricUnlockClient
import Foundation
import Synchronization
import TestKit
import Testing

/// The client against a real agent behind a scripted proxy: an answer the protocol does not define drops nothing
/// (the events stay buffered and are retried with backoff); only a 400 or 409 naming an event drops that event, and
/// accounts it; a refused drop report never costs the caller's events; a failed multi-request `send` says what was
/// committed and what was kept, so nothing is lost and nothing written twice.
@Suite struct AuditClientAnswerTests {
    static func client(
        _ socket: String,
        capacity: Int = 1000,
        maxBatch: Int = 256,
        reportDeviceId: String = "test-host",
        keyPrefix: String = "generated-",
        clock: any Clock<Duration> = ContinuousClock()
    ) throws -> AuditClient {
        var configuration = AuditClientConfiguration(socketPath: socket)
        configuration.capacity = capacity
        configuration.maxBatch = maxBatch
        configuration.reportDeviceId = reportDeviceId
        configuration.requestTimeout = .seconds(120)
        let counter = Mutex(0)
        return try AuditClient(
            configuration: configuration,
            clock: clock,
            makeIdempotencyKey: {
                let number = counter.withLock { count in
                    count += 1
                    return count
                }
                return keyPrefix + String(number)
            }
        )
    }

    /// The keys of the agent's log, in seq order.
    static func keys(_ agent: Agent) throws -> [String] {
        try ClientTestAgent.events(agent.log).map(\.event.idempotencyKey)
    }

    /// Answers the protocol does not define, each given to the first request of a flush of two buffered events and
    /// a pending drop report (the buffer overflowed once).
    static let undefinedAnswers: [(status: Int, body: String)] = [
        (404, #"{"error":"no such endpoint","code":"http404"}"#),
        (405, #"{"error":"method not allowed","code":"http405"}"#),
        (401, #"{"error":"unauthorized","code":"http401"}"#),
        (403, ""),
        (201, #"{"seqs":[1,2,3]}"#),
        (302, ""),
        (400, #"{"error":"cannot read the body","code":"http400"}"#),
        (409, #"{"error":"conflict","code":"differentEvent"}"#),
        (400, #"{"error":"bad","code":"unknownType","line":9}"#),
        (200, #"{"seqs":[1]}"#),
    ]

    @Test func anAnswerThatNamesNoEventDropsNothingAndTheNextFlushDeliversAll() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            var expected: [String] = []
            for (number, answer) in Self.undefinedAnswers.enumerated() {
                let proxy = try AgentProxy(path: dir.file("proxy.sock"), target: ClientTestAgent.socket(dir)) {
                    index,
                    _ in
                    index == 0 ? .answer(status: answer.status, body: answer.body) : .forward
                }
                defer { proxy.stop() }
                let client = try Self.client(proxy.path, capacity: 2, keyPrefix: "\(number)-generated-")
                for suffix in ["a", "b", "c"] {
                    try await client.enqueue(ClientTestAgent.routine("\(number)-\(suffix)"))
                }
                #expect(await client.unreportedDrops == [.overflow: 1])
                let failure = await AuditClientAgentTests.expectFailure(.unexpectedAnswer) {
                    _ = try await client.flush()
                }
                #expect(failure?.isRetried == true, "HTTP \(answer.status)")
                #expect(failure?.buffered == 2, "HTTP \(answer.status)")
                // Nothing left the buffer, nothing was counted as refused, the report was not withdrawn.
                #expect(await client.bufferedCount == 2, "HTTP \(answer.status)")
                #expect(await client.unreportedDrops == [.overflow: 1], "HTTP \(answer.status)")
                #expect(await client.withdrawnDrops.isEmpty, "HTTP \(answer.status)")
                #expect(proxy.requests.withLock { $0.count } == 1)
                // The next flush reaches the agent: the report and both events.
                let delivered = try await client.flush()
                #expect(delivered.map(\.event.idempotencyKey) == ["\(number)-b", "\(number)-c"])
                #expect(await client.unreportedDrops.isEmpty)
                expected += ["\(number)-generated-1", "\(number)-b", "\(number)-c"]
            }
            #expect(try Self.keys(agent) == expected)
            let reports = try ClientTestAgent.events(agent.log).filter { $0.event.type == "AUDIT_EVENTS_DROPPED" }
            #expect(reports.count == Self.undefinedAnswers.count)
            #expect(reports.allSatisfy { $0.event.attributes["reason"] == .string("overflow") })
        }
    }

    @Test func runRetriesAnUnexpectedAnswerWithBackoffUntilTheAgentCommits() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let proxy = try AgentProxy(path: dir.file("proxy.sock"), target: ClientTestAgent.socket(dir)) { index, _ in
                index < 2 ? .answer(status: 404, body: #"{"error":"no such endpoint","code":"http404"}"#) : .forward
            }
            defer { proxy.stop() }
            let clocks = ManualClocks()
            let client = try Self.client(proxy.path, clock: clocks)
            let failure = await AuditClientAgentTests.expectFailure(.unexpectedAnswer) {
                _ = try await client.send(ClientTestAgent.critical("c1"))
            }
            #expect(failure?.kept.map(\.idempotencyKey) == ["c1"])
            #expect(failure?.agentCode == "http404")
            let retries = Task { await client.run() }
            defer { retries.cancel() }
            // The second 404: run() waits its first backoff (1 s); then the agent commits.
            for _ in 0..<6000 where clocks.sleepers == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(clocks.sleepers == 1)
            #expect(await client.bufferedCount == 1)
            clocks.advance(.seconds(1))
            for _ in 0..<6000 where await client.bufferedCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(await client.bufferedCount == 0)
            #expect(proxy.requests.withLock { $0.count } == 3)
            #expect(try Self.keys(agent) == ["c1"])
        }
    }

    @Test func anEventTooLargeAloneIsKeptAndRetriedNotDropped() async throws {
        let dir = try ClientTempDir()
        var configuration = ClientTestAgent.configuration(dir)
        configuration.maxBodyBytes = 400
        try await ClientTestAgent.withAgent(configuration) { agent in
            let client = try Self.client(ClientTestAgent.socket(dir))
            var huge = ClientTestAgent.routine("huge")
            huge.userId = String(repeating: "u", count: 300)
            let failure = await AuditClientAgentTests.expectFailure(.unexpectedAnswer) {
                _ = try await client.send(huge)
            }
            #expect(failure?.agentCode == "http413")
            #expect(failure?.kept == [huge])
            #expect(await client.bufferedCount == 1)
            await AuditClientAgentTests.expectFailure(.unexpectedAnswer) { _ = try await client.flush() }
            #expect(await client.bufferedCount == 1)
            #expect(await client.unreportedDrops.isEmpty)
            #expect(try Self.keys(agent).isEmpty)
        }
    }

    @Test func sendHalvesOnA413WhateverItsBody() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            // A 413 without the agent's code (a proxy's): halved all the same, as `flush` does.
            let proxy = try AgentProxy(path: dir.file("proxy.sock"), target: ClientTestAgent.socket(dir)) { index, _ in
                index == 0 ? .answer(status: 413, body: "request entity too large") : .forward
            }
            defer { proxy.stop() }
            let client = try Self.client(proxy.path)
            let seqs = try await client.send((0..<4).map { ClientTestAgent.routine("half-\($0)") })
            #expect(seqs == [1, 2, 3, 4])
            #expect(proxy.events(ofRequest: 1).count == 2)
            #expect(try Self.keys(agent) == (0..<4).map { "half-\($0)" })
        }
    }

    @Test func aRefusedDropReportIsWithdrawnAndTheCallersEventsAreStillCommitted() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            // A deviceId the agent refuses (over 256 bytes): the agent answers 400 naming the report's line.
            let client = try Self.client(
                ClientTestAgent.socket(dir),
                capacity: 1,
                reportDeviceId: String(repeating: "h", count: 300)
            )
            try await client.enqueue(ClientTestAgent.routine("r1"))
            try await client.enqueue(ClientTestAgent.routine("r2"))
            #expect(await client.unreportedDrops == [.overflow: 1])
            let seqs = try await client.send([ClientTestAgent.routine("e1"), ClientTestAgent.critical("e2")])
            #expect(seqs == [1, 2])
            // The backlog (r2) followed; the report is withdrawn and its count kept where the caller can read it.
            #expect(try Self.keys(agent) == ["e1", "e2", "r2"])
            #expect(await client.bufferedCount == 0)
            #expect(await client.unreportedDrops.isEmpty)
            #expect(await client.withdrawnDrops == [.overflow: 1])
            // The same in flush: the report is withdrawn, the events go through.
            for key in ["r3", "r4", "r5"] { try await client.enqueue(ClientTestAgent.routine(key)) }
            let delivered = try await client.flush()
            #expect(delivered.map(\.event.idempotencyKey) == ["r5"])
            #expect(await client.withdrawnDrops == [.overflow: 3])
            #expect(try Self.keys(agent) == ["e1", "e2", "r2", "r5"])
        }
    }

    @Test func aRefusalInALaterRequestReturnsTheCommittedAndKeepsTheRest() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let client = try Self.client(ClientTestAgent.socket(dir), maxBatch: 2)
            var bad = ClientTestAgent.routine("bad")
            bad.type = "NO_SUCH_EVENT"
            // Requests [a, b] (committed), [c, bad] (refused: bad is final), [e] (never sent).
            let events = [
                ClientTestAgent.routine("a"), ClientTestAgent.routine("b"), ClientTestAgent.routine(""), bad,
                ClientTestAgent.critical(""),
            ]
            let failure = try #require(
                await AuditClientAgentTests.expectFailure(.refused) { _ = try await client.send(events) }
            )
            #expect(failure.line == 4)
            #expect(failure.agentCode == "unknownType")
            #expect(failure.committed.map(\.seq) == [1, 2])
            #expect(failure.committed.map(\.event.idempotencyKey) == ["a", "b"])
            // The rest of the refused request and the request after it are kept, with the keys they were given.
            #expect(failure.kept.map(\.idempotencyKey) == ["generated-1", "generated-2"])
            #expect(failure.kept.map(\.type) == ["BIOMETRIC_AUTH_SUCCESS", "BIOMETRIC_AUTH_FAILURE"])
            #expect(failure.buffered == 2)
            #expect(await client.bufferedCount == 2)
            // A caller who sends the kept events again gets their seqs; the buffered copies, flushed after that
            // send, are answered the same seqs by the agent and written once.
            #expect(try await client.send(failure.kept) == [3, 4])
            #expect(await client.bufferedCount == 0)
            #expect(try await client.flush().isEmpty)
            #expect(try Self.keys(agent) == ["a", "b", "generated-1", "generated-2"])
        }
    }

    @Test func anOutageInALaterRequestReturnsTheCommittedAndKeepsTheRest() async throws {
        let dir = try ClientTempDir()
        try await ClientTestAgent.withAgent(ClientTestAgent.configuration(dir)) { agent in
            let proxy = try AgentProxy(path: dir.file("proxy.sock"), target: ClientTestAgent.socket(dir)) { index, _ in
                index == 1 || index == 3 ? .answer(status: 503, body: #"{"error":"later","code":"http503"}"#) : .forward
            }
            defer { proxy.stop() }
            let client = try Self.client(proxy.path, maxBatch: 2)
            let sink = ClientAuditSink(client: client, batchSize: 2)
            let failure = try #require(
                await AuditClientAgentTests.expectFailure(.agentUnavailable) {
                    _ = try await client.send((0..<5).map { ClientTestAgent.routine("s\($0)") })
                }
            )
            #expect(failure.committed.map(\.seq) == [1, 2])
            #expect(failure.kept.map(\.idempotencyKey) == ["s2", "s3", "s4"])
            #expect(failure.description.contains("2 event(s) committed before"))
            // A flush that fails in its second request says what its first committed (the sink counts it).
            let flushFailure = try #require(
                await AuditClientAgentTests.expectFailure(.agentUnavailable) { _ = try await sink.flush() }
            )
            #expect(flushFailure.committed.map(\.event.idempotencyKey) == ["s2", "s3"])
            #expect(await sink.written == ["BIOMETRIC_AUTH_SUCCESS": 2])
            #expect(await client.bufferedCount == 1)
            #expect(try await sink.flush() == 1)
            #expect(try Self.keys(agent) == (0..<5).map { "s\($0)" })
        }
    }
}
