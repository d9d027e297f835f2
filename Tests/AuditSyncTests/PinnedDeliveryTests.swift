import AuditChain
@testable import AuditStore
@testable import AuditWire
import Foundation
import Testing
import AuditSync
import TestKit

/// Issue 20 on the engine alone: pinned entries never leave delivery except by being accepted, refusals of the
/// log pause without spending attempts, backoff a backend cannot defeat, the lag of the verified copy is health.
@Suite("Pinned delivery")
struct PinnedDeliveryTests {
    /// A collector that refuses the entries `refuse` says, with `code`, and accepts the rest.
    static func refusing(_ code: Int, _ refuse: @escaping @Sendable (UInt64) -> Bool) -> ScriptedTransport.Answer {
        .perEntry { seq in
            refuse(seq) ? SyncEntryResult(seq: seq, status: .rejected, code: code, reason: "scripted \(code)") : nil
        }
    }

    @Test("a removal record refused permanently is held (failing), never dead-lettered, and delivered when accepted")
    func refusedRecordIsHeld() async throws {
        var policy = DeliveryPolicy()
        policy.maxEvents = 5
        policy.maxDeadLetters = 1
        let fixture = try await DeliveryFixture(policy: policy)
        fixture.transport.set(.failure("connection refused"))
        try await fixture.append(8)  // 1...8: 3 leave by FIFO while the backend is down
        try await fixture.engine.cycle()
        fixture.clocks.advance(.seconds(2))
        #expect(try fixture.removalRecordSeqs().count == 1)
        // The backend is back but refuses every accounted removal (and nothing else).
        let log = fixture.log
        fixture.transport.set(
            Self.refusing(422) { seq in
                (try? log.entries(seqs: [seq]).first.flatMap { try SealedEntry(serialized: $0.bytes) })??.header
                    .kind == .accountedRemoval
            }
        )
        for _ in 0..<30 {
            let report = try await fixture.engine.cycle()
            #expect(report.health == .failing || report.recordsSealed > 0)
            fixture.clocks.advance(.seconds(301))
        }
        let record = try #require(try fixture.removalRecordSeqs().first)
        let row = try #require(try fixture.table.items[record])
        #expect(row.state == .pending && row.reason == "refused" && row.priority == .system)
        #expect(try fixture.table.count(.dlq) == 0)
        let status = try fixture.status
        #expect(status.health == "failing" && status.pendingRecords == 1 && status.pendingEvents == 0)
        #expect(status.lastError?.contains("scripted 422") == true)
        // Fixed: the record goes through and the health recovers.
        fixture.transport.set(.acceptAll)
        let report = try await fixture.engine.cycle()
        #expect(report.delivered == 1 && report.health == .healthy)
        #expect(try fixture.table.items.isEmpty)
    }

    @Test("pinned rows found in the DLQ go back to pending; DLQ overflow and purge never take them")
    func pinnedRowsLeaveTheDLQ() {
        var table = DeliveryTable()
        for seq in UInt64(1)...4 {
            table.items[seq] = DeliveryItem(seq: seq, priority: .routine, enqueuedAt: 0, state: .dlq, hash: [])
        }
        table.items[5] = DeliveryItem(seq: 5, priority: .system, enqueuedAt: 0, state: .dlq, hash: [])
        table.items[6] = DeliveryItem(seq: 6, priority: .pinned, enqueuedAt: 0, state: .dlq, hash: [])
        var policy = DeliveryPolicy()
        policy.maxDeadLetters = 1
        let left = DeliveryLimits.enforce(&table, now: 1, policy: policy)
        #expect(left == ["dlqOverflow": 3])
        #expect(table.items[5]?.state == .pending && table.items[6]?.state == .pending)
        #expect(table.count(.dlq) == 1)
    }

    @Test("a per-entry 503 pauses the whole pipeline on the schedule and spends no entry's attempts")
    func logRefusalIsAnOutage() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(3)
        fixture.transport.set(Self.refusing(503) { $0 >= 2 })
        var delays: [Int64] = []
        for _ in 0..<12 {
            let before = fixture.clocks.monotonic
            let report = try await fixture.engine.cycle()
            if report.attempted {
                delays.append((await fixture.engine.state.pausedUntil - before).milliseconds / 1000)
            }
            fixture.clocks.advance(await fixture.engine.state.pausedUntil - fixture.clocks.monotonic)
        }
        #expect(delays.prefix(6) == [1, 5, 30, 60, 300, 300])
        let table = try fixture.table
        #expect(table.count(.dlq) == 0)
        #expect(table.items.values.allSatisfy { $0.attempts == 0 && $0.state == .pending })
        #expect(Set(table.items.keys) == [2, 3])
    }

    @Test("Retry-After never shortens the schedule: a date in the past, or 0, waits the computed backoff")
    func retryAfterInThePast() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(1)
        let past = "Sun, 06 Nov 1994 08:49:37 GMT"
        var delays: [Int64] = []
        for answer in [past, "0", past, past] {
            fixture.transport.set(.status(503, retryAfter: answer))
            let before = fixture.clocks.monotonic
            #expect(try await fixture.engine.cycle().attempted)
            let paused = await fixture.engine.state.pausedUntil
            delays.append((paused - before).milliseconds / 1000)
            #expect(try await fixture.engine.cycle().attempted == false)
            fixture.clocks.advance(paused - before)
        }
        #expect(delays == [1, 5, 30, 60])
        // A longer Retry-After is honoured.
        fixture.transport.set(.status(503, retryAfter: "900"))
        let before = fixture.clocks.monotonic
        try await fixture.engine.cycle()
        #expect(await fixture.engine.state.pausedUntil - before == .seconds(900))
    }

    @Test("a probe ends a network-level pause once; if the batch fails again, the schedule alone decides")
    func probeOncePerOutage() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(1)
        fixture.transport.set(.failure("connection reset"))
        fixture.transport.setReachable(true)  // a GET is answered, the batch is not
        try await fixture.engine.cycle()
        #expect(await fixture.engine.probeIfDown())
        #expect(try await fixture.engine.cycle().attempted)
        // Failed again: no more probing until a batch is answered.
        #expect(await fixture.engine.probeIfDown() == false)
        #expect(try await fixture.engine.cycle().attempted == false)
        var attempts = 0
        for _ in 0..<120 {  // a minute of half-second probe intervals
            fixture.clocks.advance(.milliseconds(500))
            _ = await fixture.engine.probeIfDown()
            if try await fixture.engine.cycle().attempted { attempts += 1 }
        }
        #expect(attempts <= 3)
        // Once a batch is answered, probing is back.
        fixture.transport.set(.acceptAll)
        fixture.clocks.advance(.seconds(300))
        #expect(try await fixture.engine.cycle().delivered == 2)
        #expect(await fixture.engine.state.probeSpent == false)
    }

    @Test("a collector whose verified head stops advancing makes health degraded, with nothing pending")
    func stuckReceiptIsDegraded() async throws {
        var policy = DeliveryPolicy()
        policy.degradedLagAge = .seconds(60)
        let fixture = try await DeliveryFixture(policy: policy)
        try await fixture.append(2)
        #expect(try await fixture.engine.cycle().health == .healthy)
        // The collector accepts everything from now on, but its receipt stays at seq 2.
        let stuck = try #require(
            ScriptedTransport.treeReceipt(
                fixture.transport.delivered,
                batch: SyncBatch(logId: try fixture.log.info().logId, batchId: "stuck", entries: [], checkpoint: nil),
                key: fixture.transport.collectorSigningKey
            )
        )
        fixture.transport.setReceipt { _, _ in stuck }
        try await fixture.append(3)
        let report = try await fixture.engine.cycle()
        #expect(report.delivered == 3 && report.health == .healthy)
        fixture.clocks.advance(.seconds(61))
        try await fixture.append(1)
        let later = try await fixture.engine.cycle()
        #expect(later.health == .degraded && later.lag.entries == 4)
        let status = try fixture.status
        #expect(status.pending == 0 && status.health == "degraded" && status.receiptSeq == 2)
        #expect(status.json.objectValue?["lagEntries"] == .integer(4))
        // The receipt moves again: healthy.
        fixture.transport.setReceipt(nil)
        try await fixture.append(1)
        #expect(try await fixture.engine.cycle().health == .healthy)
    }

    @Test("while the collector takes nothing, removals wait for the pending record, up to maxEvents rows")
    func deferredRemovalsAreBounded() async throws {
        var policy = DeliveryPolicy()
        policy.maxEvents = 5
        let fixture = try await DeliveryFixture(policy: policy)
        fixture.transport.set(.failure("connection refused"))
        try await fixture.append(8)  // 3 leave by FIFO; the first attempt seals their record, then fails
        try await fixture.engine.cycle()
        #expect(try fixture.removalRecordSeqs().count == 1)
        // A few more leave: they wait for the pending record (stalled), no second record.
        fixture.clocks.advance(.seconds(2))
        try await fixture.append(4)
        try await fixture.engine.cycle()
        #expect(try fixture.removalRecordSeqs().count == 1)
        #expect(try fixture.status.awaitingRecord == 4)
        // Past maxEvents waiting rows they are sealed anyway.
        fixture.clocks.advance(.seconds(10))
        try await fixture.append(6)
        try await fixture.engine.cycle()
        // One record per run of the waiting rows: more than the first one.
        #expect(try fixture.removalRecordSeqs().count > 1)
        #expect(try fixture.status.awaitingRecord == 0)
    }

    @Test("a collector that answers with no receipt after it receipted the log is not trusted")
    func receiptThatDisappears() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(2)
        #expect(try await fixture.engine.cycle().delivered == 3)
        fixture.transport.setReceipt { _, _ in nil }
        try await fixture.append(1)
        let report = try await fixture.engine.cycle()
        #expect(report.health == .failing && report.delivered == 0)
        let status = try fixture.status
        #expect(status.pending == 1 && status.receiptSeq == 2)
        let evidence = try fixture.log.storage.snapshot().metadata[CollectorTrust.Meta.rejectedReceipt]
        #expect(evidence?.contains("no receipt") == true)
    }

    @Test("1 200 events into a 1 000-event queue during an outage: a few records, counted apart from events")
    func overflowDuringAnOutageIsCoalesced() async throws {
        let fixture = try await DeliveryFixture()
        fixture.transport.set(.status(503, retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT"))
        for _ in 0..<300 {  // 40 events a second for 30 s, in posts of 4
            try await fixture.append(4)
            try await fixture.engine.cycle()
            fixture.clocks.advance(.milliseconds(100))
        }
        let status = try fixture.status
        #expect(status.pendingEvents == 1000)
        #expect(status.pendingRecords <= 6, "\(status.pendingRecords) records")
        #expect(status.pending == status.pendingEvents + status.pendingRecords)
        #expect(status.dropped["fifo"] == 200)
    }
}

extension DeliveryFixture {
    /// The sequence numbers of the accounted-removal records in the log.
    func removalRecordSeqs() throws -> [UInt64] {
        var seqs: [UInt64] = []
        try log.storage.forEachEntry { stored in
            if try SealedEntry(serialized: stored.bytes).header.kind == .accountedRemoval { seqs.append(stored.seq) }
            return true
        }
        return seqs
    }
}
