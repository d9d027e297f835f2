import AuditChain
@testable import AuditStore
@testable import AuditSync
@testable import AuditWire
import Crypto
import Foundation
import Testing
import TestKit

@Suite("SyncEngine")
struct SyncEngineTests {
    @Test("delivers every entry in sequence order, then the table is empty and the success is recorded")
    func deliversInOrder() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(5)
        let report = try await fixture.engine.cycle()
        #expect(report.delivered == 6)
        #expect(fixture.transport.batches.first?.entries.map(\.seq) == Array(0...5))
        #expect(try fixture.table.items.isEmpty)
        let status = try fixture.status
        #expect(status.pending == 0 && status.lastSuccess != nil && status.health == "healthy")
    }

    @Test("an outage backs off 1, 5, 30, 60, 300, 300 s and never counts against entries")
    func outageBackoff() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(3)
        fixture.transport.set(.failure("connection refused"))
        var delays: [Int64] = []
        for _ in 0..<6 {
            let before = fixture.clocks.monotonic
            let report = try await fixture.engine.cycle()
            #expect(report.attempted && report.failure == "connection refused")
            let paused = await fixture.engine.state.pausedUntil
            delays.append((paused - before).milliseconds / 1000)
            // Nothing is attempted while paused.
            #expect(try await fixture.engine.cycle().attempted == false)
            fixture.clocks.advance(paused - before)
        }
        #expect(delays == [1, 5, 30, 60, 300, 300])
        #expect(try fixture.table.items.values.allSatisfy { $0.attempts == 0 && $0.state == .pending })
    }

    @Test("a network-level outage is probed: when the backend connects again the pause ends at once")
    func reachabilityProbe() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(3)
        fixture.transport.set(.failure("connection refused"))
        for _ in 0..<5 {
            try await fixture.engine.cycle()
            fixture.clocks.advance(await fixture.engine.state.pausedUntil - fixture.clocks.monotonic)
        }
        try await fixture.engine.cycle()
        #expect(await fixture.engine.state.networkDown)
        #expect(await fixture.engine.probeIfDown() == false)
        #expect(try await fixture.engine.cycle().attempted == false)
        fixture.transport.set(.acceptAll)
        fixture.transport.setReachable(true)
        #expect(await fixture.engine.probeIfDown())
        #expect(try await fixture.engine.cycle().delivered == 4)
        // A backend that answers and asks to wait is never probed around.
        try await fixture.append(1)
        fixture.transport.set(.status(503, retryAfter: "60"))
        try await fixture.engine.cycle()
        #expect(await fixture.engine.state.networkDown == false)
        #expect(await fixture.engine.probeIfDown() == false)
    }

    @Test("a receipt is kept only if signed for this log, proving the device's entry last, extending the last tree")
    func receipts() async throws {
        let fixture = try await DeliveryFixture()
        let key = fixture.transport.collectorSigningKey
        let honest: ScriptedTransport.MakeReceipt = { ScriptedTransport.treeReceipt($1, batch: $0, key: key) }
        fixture.transport.setReceipt(honest)
        try await fixture.append(2)
        try await fixture.engine.cycle()
        #expect(try fixture.status.receiptSeq == 2)
        #expect(try fixture.status.health == "healthy")
        let pinned = try fixture.log.storage.snapshot().metadata[CollectorTrust.Meta.collectorKey]
        #expect(pinned == Hex.encode(key.publicKey.rawRepresentation))
        #expect(fixture.transport.batches.last?.treeSize == nil)
        // Each lie: the answer is ignored (nothing leaves the queue), health is failing, the refused receipt is kept
        // as evidence beside the last verified one; an honest receipt after the pause recovers.
        let lies: [(String, String, ScriptedTransport.MakeReceipt)] = [
            (
                "another hash", "fork",
                { batch, held in
                    var receipt = honest(batch, held)
                    receipt?.entryHash[0] ^= 1
                    return receipt
                }
            ),
            (
                "another log", "not this log",
                { batch, held in
                    var receipt = honest(batch, held)
                    receipt?.logId = [UInt8](repeating: 7, count: 16)
                    return receipt
                }
            ),
            ("another key", "does not verify", { ScriptedTransport.treeReceipt($1, batch: $0, key: .generate()) }),
            (
                "a broken inclusion proof", "is not leaf",
                { batch, held in
                    var receipt = honest(batch, held)
                    receipt?.inclusion[0][0] ^= 1
                    return receipt
                }
            ),
            (
                "another leaf index", "not the last leaf",
                { batch, held in
                    var receipt = honest(batch, held)
                    receipt?.leafIndex -= 1
                    return receipt
                }
            ),
            (
                "a rewritten earlier leaf", "does not extend",
                { batch, held in
                    ScriptedTransport.treeReceipt(held, batch: batch, key: key) { leaves in
                        var leaves = leaves
                        leaves[1][leaves[1].count - 1] ^= 1
                        return leaves
                    }
                }
            ),
            (
                "a consistency proof left out", "no consistency proof",
                { batch, held in
                    var receipt = honest(batch, held)
                    receipt?.consistency = nil
                    return receipt
                }
            ),
            (
                "a tree that shrank", "shrank",
                { batch, held in
                    ScriptedTransport.treeReceipt(held.filter { $0.key <= 1 }, batch: batch, key: key)
                }
            ),
        ]
        var expectedHead: UInt64 = 2
        for (lie, words, make) in lies {
            fixture.transport.setReceipt(make)
            try await fixture.append(1)
            let report = try await fixture.engine.cycle()
            #expect(report.health == .failing, "\(lie)")
            #expect(report.delivered == 0, "\(lie)")
            let status = try fixture.status
            #expect(status.receiptSeq == expectedHead && status.pending == 1 && status.health == "failing", "\(lie)")
            let evidence = try #require(
                try fixture.log.storage.snapshot().metadata[CollectorTrust.Meta.rejectedReceipt]
                    .flatMap { try JSONValue(parsing: Array($0.utf8)).objectValue }
            )
            #expect(evidence["reason"]?.stringValue?.contains(words) == true, "\(lie): \(evidence["reason"] ?? .null)")
            #expect(evidence["previous"].flatMap { try? TreeReceipt(json: $0) }?.seq == expectedHead, "\(lie)")
            #expect(evidence["receipt"] != .null, "\(lie)")
            // Nothing is sent while paused; after the pause, an honest receipt, consistent with the last verified.
            fixture.transport.setReceipt(honest)
            #expect(try await fixture.engine.cycle().attempted == false)
            fixture.clocks.advance(.seconds(301))
            let recovered = try await fixture.engine.cycle()
            expectedHead += 1
            #expect(recovered.delivered == 1 && recovered.health == .healthy, "\(lie)")
            #expect(try fixture.status.receiptSeq == expectedHead)
            #expect(fixture.transport.batches.last?.treeSize == expectedHead, "\(lie): the last verified size is sent")
        }
    }

    @Test("an answer in version 1 to a version 2 batch is a downgrade: refused, nothing applied")
    func versionOneAnswerRefused() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(1)
        let logId = try fixture.log.info().logId
        let batch = SyncBatch(logId: logId, batchId: "b", entries: [], checkpoint: nil)
        #expect(batch.version == SyncWire.treeVersion)
        let old = SyncResponse(
            results: [],
            receipt: CollectorReceipt(
                logId: logId,
                seq: 0,
                entryHash: [UInt8](repeating: 0, count: 32),
                receivedAt: AuditTimestamp(millisecondsSinceEpoch: 0),
                key: fixture.transport.collectorSigningKey
            )
        )
        var report = SyncEngine.CycleReport()
        #expect(try await fixture.engine.trust(old, report: &report) == nil)
        #expect(report.failure?.contains("version 1") == true)
        #expect(try fixture.status.receiptSeq == nil)
    }

    @Test("the collector key is pinned at first contact; an unpublished key leaves the answer unapplied")
    func collectorKeyPinnedAtFirstContact() async throws {
        let fixture = try await DeliveryFixture()
        fixture.transport.publishKey(nil)
        try await fixture.append(1)
        let report = try await fixture.engine.cycle()
        #expect(report.delivered == 0 && report.failure?.contains("cannot be fetched") == true)
        #expect(try fixture.status.pending == 2)
        fixture.transport.publishKey(fixture.transport.collectorSigningKey.publicKey)
        fixture.clocks.advance(.seconds(2))
        #expect(try await fixture.engine.cycle().delivered == 2)
        // Once pinned, a collector that publishes another key does not change the pin.
        fixture.transport.publishKey(SigningKey.generate().publicKey)
        try await fixture.append(1)
        #expect(try await fixture.engine.cycle().delivered == 1)
    }

    @Test("a 7-hour outage under a manual clock: degraded, then fail-open, nothing dead-lettered, all delivered after")
    func sevenHourOutage() async throws {
        var policy = DeliveryPolicy()
        policy.maxEvents = 200
        let fixture = try await DeliveryFixture(policy: policy)
        fixture.transport.set(.failure("connection refused"))
        var healths: [DeliveryHealth] = []
        // One event a minute for 7 hours; the engine cycles every minute.
        for minute in 0..<(7 * 60) {
            try await fixture.append(1, critical: minute % 2 == 0)
            let report = try await fixture.engine.cycle()
            if healths.last != report.health { healths.append(report.health) }
            fixture.clocks.advance(.seconds(60))
        }
        #expect(healths == [.healthy, .degraded, .failOpen])
        let during = try fixture.table
        #expect(during.count(.dlq) == 0)
        #expect(during.items.values.allSatisfy { $0.attempts == 0 })
        // In fail-open the probe interval caps the backoff.
        let pause = await fixture.engine.state.pausedUntil - fixture.clocks.monotonic
        #expect(pause <= policy.probeInterval)
        // The backend returns.
        fixture.transport.set(.acceptAll)
        fixture.clocks.advance(policy.probeInterval)
        var rounds = 0
        while try fixture.table.count(.pending) > 0 || fixture.table.count(.removed) > 0, rounds < 20 {
            try await fixture.engine.cycle()
            rounds += 1
        }
        #expect(try fixture.table.items.isEmpty)
        #expect(await fixture.engine.state.failures == 0)
        // 421 entries (genesis + 420 events) over a limit of 200: the excess left by FIFO, routine first, and is
        // accounted; every entry is either delivered or inside a removal record.
        let records = try fixture.removalRecords()
        let accounted = records.reduce(0) { $0 + Int($1.count) }
        #expect(accounted > 0)
        let delivered = Set(fixture.transport.delivered.keys)
        let head = try fixture.log.info().head.seq
        var covered = delivered
        for record in records { covered.formUnion(record.firstSeq...record.lastSeq) }
        #expect(covered.isSuperset(of: Set(0...head)))
        #expect(try fixture.status.dropped["fifo"] == accounted)
    }

    @Test("a retryable rejection of an entry counts; after 10 it goes to the DLQ")
    func retryableRejections() async throws {
        let fixture = try await DeliveryFixture()
        let seqs = try await fixture.append(2)
        let victim = seqs[0]
        fixture.transport.set(
            .perEntry { seq in
                seq == victim ? SyncEntryResult(seq: seq, status: .rejected, code: 429, reason: "busy") : nil
            }
        )
        for _ in 0..<10 {
            try await fixture.engine.cycle()
            fixture.clocks.advance(.seconds(400))
        }
        let item = try #require(try fixture.table.items[victim])
        #expect(item.state == .dlq && item.attempts == 10 && item.reason == "retriesExhausted")
        #expect(try fixture.table.items.count == 1)
    }

    @Test("a permanent rejection goes to the DLQ, is offered once more after a good sync, and leaves with a record")
    func permanentRejection() async throws {
        let fixture = try await DeliveryFixture()
        let seqs = try await fixture.append(3)
        let victim = seqs[1]
        fixture.transport.set(
            .perEntry { seq in
                seq == victim ? SyncEntryResult(seq: seq, status: .rejected, code: 422, reason: "bad signature") : nil
            }
        )
        try await fixture.engine.cycle()
        #expect(try fixture.table.items[victim]?.state == .dlq)
        #expect(try fixture.status.dlq == 1)
        // The next cycle offers it once more; refused again, it leaves with an accounted removal.
        try await fixture.engine.cycle()
        #expect(fixture.transport.batches.last?.entries.map(\.seq) == [victim])
        #expect(try fixture.table.items[victim]?.state == .removed)
        try await fixture.engine.cycle()
        let records = try fixture.removalRecords()
        #expect(records.count == 1)
        #expect(records.first?.reason == "rejected" && records.first?.firstSeq == victim)
        #expect(records.first?.detail.contains("bad signature") == true)
        #expect(try fixture.table.items.isEmpty)
        #expect(try fixture.status.dropped["rejected"] == 1)
    }

    @Test("a DLQ entry accepted on its second offer simply leaves")
    func dlqReplayAccepted() async throws {
        let fixture = try await DeliveryFixture()
        let seqs = try await fixture.append(2)
        fixture.transport.set(
            .perEntry { seq in
                seq == seqs[0] ? SyncEntryResult(seq: seq, status: .rejected, code: 409, reason: "conflict") : nil
            }
        )
        try await fixture.engine.cycle()
        fixture.transport.set(.acceptAll)
        try await fixture.engine.cycle()
        #expect(try fixture.table.items.isEmpty)
        #expect(try fixture.removalRecords().isEmpty)
    }

    @Test("413 splits the batch until it fits")
    func splitOn413() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(9)
        fixture.transport.set(.tooLargeAbove(3))
        let report = try await fixture.engine.cycle()
        #expect(report.delivered == 10)
        #expect(try fixture.table.items.isEmpty)
        let sizes: [Int] = fixture.transport.batches.map { $0.entries.count }
        let accepted: Int = sizes.filter { $0 <= 3 }.reduce(0, +)
        #expect(accepted == 10)
    }

    @Test("a whole-request 422 for a single entry sends an event to the DLQ and holds the genesis")
    func wholeRequestRejection() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(1)
        fixture.transport.set(.status(422, retryAfter: nil))
        let report = try await fixture.engine.cycle()
        #expect(report.deadLettered == 1 && report.health == .failing)
        #expect(try fixture.table.count(.dlq) == 1)
        let genesis = try #require(try fixture.table.items[0])
        #expect(genesis.state == .pending && genesis.reason == "refused")
        #expect(await fixture.engine.heldCount == 1)
    }

    @Test("401 pauses delivery without touching entries, and delivery resumes when credentials work")
    func unauthorized() async throws {
        let fixture = try await DeliveryFixture()
        try await fixture.append(2)
        fixture.transport.set(.status(401, retryAfter: nil))
        let report = try await fixture.engine.cycle()
        #expect(report.failure?.contains("credentials") == true && report.health == .degraded)
        #expect(try fixture.table.items.values.allSatisfy { $0.state == .pending && $0.attempts == 0 })
        #expect(try await fixture.engine.cycle().attempted == false)
        fixture.transport.set(.acceptAll)
        fixture.clocks.advance(.seconds(300))
        #expect(try await fixture.engine.cycle().delivered == 3)
    }

    @Test("503 with Retry-After (seconds or HTTP date) sets the pause, capped")
    func retryAfter() async throws {
        let fixture = try await DeliveryFixture()
        fixture.transport.set(.status(503, retryAfter: "120"))
        try await fixture.engine.cycle()
        #expect(await fixture.engine.state.pausedUntil == .seconds(120))
        fixture.clocks.advance(.seconds(120))
        fixture.transport.set(.status(429, retryAfter: "999999"))
        try await fixture.engine.cycle()
        #expect(await fixture.engine.state.pausedUntil == .seconds(120 + 3600))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let text = formatter.string(from: now.addingTimeInterval(90))
        #expect(SyncClassifier.parseRetryAfter(text, now: now) == .seconds(90))
        #expect(SyncClassifier.parseRetryAfter("soon", now: now) == nil)
    }

    @Test("classification of every answer in the table")
    func classification() {
        func verdict(_ status: Int) -> String {
            switch SyncClassifier.classify(
                .response(status: status, retryAfter: nil, body: []),
                now: Date(),
                maxRetryAfter: .seconds(60)
            ) {
            case .answered: "answered"
            case .outage: "outage"
            case .unauthorized: "unauthorized"
            case .split: "split"
            }
        }
        for status in [408, 429, 500, 502, 503, 504] { #expect(verdict(status) == "outage") }
        for status in [400, 409, 422, 413] { #expect(verdict(status) == "split") }
        for status in [401, 403] { #expect(verdict(status) == "unauthorized") }
        #expect(verdict(200) == "outage")  // a 200 without a valid body is not an answer
        if case .outage = SyncClassifier.classify(.failure("timeout"), now: Date(), maxRetryAfter: .seconds(1)) {
        } else {
            Issue.record("a network failure must be an outage")
        }
    }
}
