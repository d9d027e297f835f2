import AuditChain
import AuditAgent
import AuditCollector
import AuditStore
import AuditSync
import Foundation
import Testing
import AuditWire
import TestKit

/// The sync engine over real HTTP on loopback, through a ``FaultProxy``, to an in-process collector: every fault
/// leaves entries pending and unharmed, and once the backend answers again every entry arrives exactly once.
@Suite("SyncFault", .serialized)
struct SyncFaultTests {
    @Test("connection refused: outage with backoff, no attempts counted, then exactly once")
    func connectionRefused() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.refuse)
            let report = try await fixture.engine.cycle()
            #expect(report.failure == "connection refused")
            try fixture.expectNoHarm(report)
            #expect(await fixture.pause == .seconds(1))
            // While paused, nothing is attempted.
            #expect(try await fixture.engine.cycle().attempted == false)
            try await fixture.recover()
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("the reachability probe: any HTTP answer means reachable; refused or silent does not")
    func reachabilityProbe() async throws {
        try await SyncFixture.run { fixture in
            let seqs = try await fixture.append(2)
            // Patient where an answer is expected (a loaded machine must not turn it into a timeout), short where
            // none will come.
            let patient = HTTPSyncTransport(backend: fixture.proxy.url, token: nil, timeout: .seconds(30))
            let short = HTTPSyncTransport(backend: fixture.proxy.url, token: nil, timeout: .seconds(1))
            // The collector answers a GET on the events path with an error status: reachable all the same.
            #expect(await patient.isReachable())
            try fixture.proxy.set(.refuse)
            #expect(await patient.isReachable() == false)
            try fixture.proxy.set(.status(503))
            #expect(await patient.isReachable())
            try fixture.proxy.set(.blackhole)
            #expect(await short.isReachable() == false)
            // A probe delivers nothing and counts no attempt.
            let table = try fixture.table
            #expect(seqs.allSatisfy { table.items[$0]?.state == .pending && table.items[$0]?.attempts == 0 })
            #expect(try await fixture.collector.status(logId: fixture.log.info().logId) == nil)
        }
    }

    @Test("the agent's latest checkpoint travels with the batch, and the collector keeps it")
    func checkpointTravels() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(3)
            let checkpoint = try await fixture.log.writeCheckpoint()
            try await fixture.append(2)
            let report = try await fixture.engine.cycle()
            #expect(report.failure == nil && report.delivered == 7)
            let status = try #require(try await fixture.collector.status(logId: fixture.log.info().logId))
            #expect(status.deviceCheckpoint?.checkpoint == checkpoint)
            #expect(status.checkpointConflicts.isEmpty)
        }
    }

    @Test("a backend that never answers: timeout, outage, then exactly once")
    func timeout() async throws {
        // A short timeout: the blackhole never answers. Recovery retries cycles, so a timeout there only costs time.
        try await SyncFixture.run(timeout: .seconds(1)) { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.blackhole)
            let report = try await fixture.engine.cycle()
            #expect(report.failure == "timeout")
            try fixture.expectNoHarm(report)
            #expect(fixture.proxy.counts["blackhole"] == 1)
            try await fixture.recover()
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("500, then a second outage in a row backs off longer; then exactly once")
    func serverError() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.status(500))
            let first = try await fixture.engine.cycle()
            #expect(first.failure?.hasPrefix("HTTP 500") == true)
            try fixture.expectNoHarm(first)
            #expect(await fixture.pause == .seconds(1))
            fixture.clocks.advance(.seconds(1))
            let second = try await fixture.engine.cycle()
            try fixture.expectNoHarm(second)
            #expect(await fixture.pause == .seconds(5))
            #expect(fixture.proxy.counts["status500"] == 2 && fixture.proxy.forwarded == 0)
            try await fixture.recover()
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("503 with Retry-After: 2 pauses exactly 2 s, then exactly once")
    func unavailableWithRetryAfter() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.status(503, retryAfter: "2"))
            let report = try await fixture.engine.cycle()
            #expect(report.failure?.hasPrefix("HTTP 503") == true)
            try fixture.expectNoHarm(report)
            #expect(await fixture.pause == .seconds(2))
            fixture.clocks.advance(.milliseconds(1999))
            #expect(try await fixture.engine.cycle().attempted == false)
            try await fixture.recover()
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("429: outage, no attempts counted, then exactly once")
    func tooManyRequests() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.status(429))
            let report = try await fixture.engine.cycle()
            #expect(report.failure?.hasPrefix("HTTP 429") == true)
            try fixture.expectNoHarm(report)
            try await fixture.recover()
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("reset mid-response after the collector stored the batch: the larger retry gets duplicates, exactly once")
    func resetMidResponse() async throws {
        try await SyncFixture.run { fixture in
            let first = try await fixture.append(5)
            try fixture.proxy.set(.resetMidResponse)
            let report = try await fixture.engine.cycle()
            try fixture.expectNoHarm(report)
            // The collector stored the batch although the agent never saw the answer.
            let logId = try fixture.log.info().logId
            #expect(try await fixture.collector.store.count(logId: logId) == first.count + 1)
            // One more entry makes the retry a different batch: the collector decides entry by entry.
            let late = try await fixture.append(1)
            try await fixture.recover()
            let results = try #require(fixture.transport.responses.last).results
            #expect(results.filter { $0.status == .duplicate }.map(\.seq) == Array(0...first.last!))
            #expect(results.filter { $0.status == .accepted }.map(\.seq) == late)
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("reset mid-response, the identical batch retried: the collector replays its answer, nothing stored twice")
    func resetThenIdenticalRetry() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.resetMidResponse)
            try fixture.expectNoHarm(try await fixture.engine.cycle())
            try await fixture.recover()
            let results = try #require(fixture.transport.responses.last).results
            #expect(results.count == 6 && results.allSatisfy { $0.status != .rejected })
            #expect(fixture.proxy.forwarded == 2)
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("a slow answer within the timeout succeeds at the first attempt")
    func slowWithinTimeout() async throws {
        // 600 ms of delay against a 5 s deadline: slow, but well within it even on a loaded machine.
        try await SyncFixture.run(timeout: .seconds(5)) { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.slow(milliseconds: 600))
            let report = try await fixture.engine.cycle()
            #expect(report.failure == nil && report.delivered == 6)
            #expect(try fixture.table.items.isEmpty)
            #expect(fixture.proxy.counts["slow"] == 1)
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("401: paused for the probe interval, health degraded, no attempts; then exactly once")
    func unauthorized() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(5)
            try fixture.proxy.set(.status(401))
            let report = try await fixture.engine.cycle()
            #expect(report.failure?.hasPrefix("credentials refused: HTTP 401") == true)
            #expect(report.health == .degraded)
            try fixture.expectNoHarm(report)
            #expect(await fixture.pause == DeliveryPolicy().probeInterval)
            let status = try DeliveryStatus.read(fixture.log.storage)
            #expect(status.health == "degraded" && status.lastError?.contains("401") == true)
            try await fixture.recover()
            try await fixture.expectExactlyOnce()
            #expect(try DeliveryStatus.read(fixture.log.storage).health == "healthy")
        }
    }

    @Test("413 above 3 entries: the batch is split until it passes, everything delivered in one cycle")
    func tooLargeSplits() async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(10)
            try fixture.proxy.set(.tooLargeAbove(entries: 3))
            let report = try await fixture.engine.cycle()
            #expect(report.failure == nil && report.delivered == 11 && report.deadLettered == 0)
            #expect(try fixture.table.items.isEmpty)
            // 11 -> 5 + 6 -> (2 + 3) + (3 + 3): three refused, four forwarded.
            #expect(fixture.proxy.counts["tooLarge"] == 7 && fixture.proxy.forwarded == 4)
            try await fixture.expectExactlyOnce()
        }
    }

    @Test("one entry refused (bad signature): it goes to the DLQ, the others are stored; replayed intact, accepted")
    func partialRejection() async throws {
        try await SyncFixture.run { fixture in
            let seqs = try await fixture.append(5)
            let victim = seqs[2]
            fixture.transport.corrupt(victim)
            let report = try await fixture.engine.cycle()
            #expect(report.failure == nil && report.deadLettered == 1 && report.delivered == 5)
            let rejected = try #require(fixture.transport.responses.last).results.filter { $0.status == .rejected }
            #expect(rejected.map(\.seq) == [victim] && rejected.first?.code == 422)
            let item = try #require(try fixture.table.items[victim])
            #expect(item.state == .dlq && item.attempts == 0 && item.detail.contains("422"))
            #expect(try fixture.table.items.count == 1)
            // The collector's head stops before the hole.
            let logId = try fixture.log.info().logId
            #expect(try await fixture.collector.store.head(logId: logId)?.seq == victim - 1)
            // After that successful sync the DLQ entry is offered once more, intact this time, and accepted.
            fixture.transport.corrupt(nil)
            let replay = try await fixture.engine.cycle()
            #expect(replay.delivered == 1 && replay.removed.isEmpty)
            #expect(fixture.transport.responses.last?.results.map(\.seq) == [victim])
            #expect(try fixture.table.items.isEmpty)
            try await fixture.expectExactlyOnce()
        }
    }
}
