import AuditChain
@testable import AuditStore
@testable import AuditSync
@testable import AuditWire
import Foundation
import Testing
import TestKit

@Suite("DeliveryLimits")
struct DeliveryLimitsTests {
    @Test("FIFO evicts routine entries before critical ones, oldest first, and accounts for them")
    func priorityEviction() async throws {
        var policy = DeliveryPolicy()
        policy.maxEvents = 10
        let fixture = try await DeliveryFixture(policy: policy)
        let critical = try await fixture.append(6, critical: true)
        let routine = try await fixture.append(8)
        fixture.transport.set(.failure("down"))
        let report = try await fixture.engine.cycle()
        // 14 pending events (the genesis is pinned and does not count) → 4 leave, all routine, the oldest.
        #expect(report.removed == ["fifo": 4])
        // Their record is sealed before the attempt, in the same transaction that takes them out.
        #expect(report.recordsSealed == 1)
        let table = try fixture.table
        #expect(routine.prefix(4).allSatisfy { table.items[$0] == nil })
        #expect(critical.allSatisfy { table.items[$0]?.state == .pending })
        #expect(table.items[0]?.state == .pending)
        // The record is delivered with the rest and bridges the gap.
        fixture.transport.set(.acceptAll)
        fixture.clocks.advance(.seconds(2))
        try await fixture.engine.cycle()
        let records = try fixture.removalRecords()
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.reason == "fifo" && record.count == 4)
        #expect(record.firstSeq == routine[0] && record.lastSeq == routine[3])
        let next = try SealedEntry(serialized: try #require(fixture.transport.delivered[routine[4]]))
        #expect(next.header.prevHash == record.lastRemovedHash)
        #expect(try fixture.table.items.isEmpty)
    }

    @Test("entries older than maxAge expire, pinned ones stay")
    func expiry() async throws {
        let fixture = try await DeliveryFixture()
        let old = try await fixture.append(3)
        fixture.transport.set(.failure("down"))
        fixture.clocks.advance(.seconds(73 * 3600))
        let fresh = try await fixture.append(1)
        let report = try await fixture.engine.cycle()
        #expect(report.removed == ["expired": 3])
        let table = try fixture.table
        #expect(old.allSatisfy { table.items[$0] == nil })
        let records = try fixture.removalRecords()
        #expect(records.map(\.reason) == ["expired"])
        #expect(records.first?.firstSeq == old.first && records.first?.lastSeq == old.last)
        #expect(fresh.allSatisfy { table.items[$0]?.state == .pending })
        #expect(table.items[0]?.state == .pending)
    }

    @Test("a forward wall-clock jump of hours expires nothing; real elapsed time still does")
    func clockJumpForward() async throws {
        let fixture = try await DeliveryFixture()
        fixture.transport.set(.failure("down"))
        try await fixture.append(2)
        try await fixture.engine.cycle()
        fixture.clocks.jumpWall(100 * 3_600_000)
        fixture.clocks.advance(.seconds(60))
        #expect(try await fixture.engine.cycle().removed.isEmpty)
        fixture.clocks.advance(.seconds(72 * 3600))
        #expect(try await fixture.engine.cycle().removed == ["expired": 2])
    }

    @Test("a backward wall-clock jump of hours does not keep entries forever")
    func clockJumpBackward() async throws {
        let fixture = try await DeliveryFixture()
        fixture.transport.set(.failure("down"))
        try await fixture.append(2)
        try await fixture.engine.cycle()
        fixture.clocks.jumpWall(-100 * 3_600_000)
        fixture.clocks.advance(.seconds(60))
        #expect(try await fixture.engine.cycle().removed.isEmpty)
        fixture.clocks.advance(.seconds(73 * 3600))
        #expect(try await fixture.engine.cycle().removed == ["expired": 2])
    }

    @Test("the DLQ keeps at most maxDeadLetters; the oldest leave with a dlqOverflow record")
    func dlqOverflow() async throws {
        var policy = DeliveryPolicy()
        policy.maxDeadLetters = 2
        let fixture = try await DeliveryFixture(policy: policy)
        let seqs = try await fixture.append(5)
        fixture.transport.set(
            .perEntry { seq in
                seq == 0 ? nil : SyncEntryResult(seq: seq, status: .rejected, code: 400, reason: "malformed")
            }
        )
        try await fixture.engine.cycle()
        #expect(try fixture.table.count(.dlq) == 5)
        fixture.transport.set(.failure("down"))
        let report = try await fixture.engine.cycle()
        #expect(report.removed == ["dlqOverflow": 3])
        #expect(Set(try fixture.table.items(in: .dlq).map(\.seq)) == Set(seqs.suffix(2)))
        #expect(try fixture.status.dropped["dlqOverflow"] == 3)
    }

    @Test("removal runs: one record per run of consecutive removed rows; a delivered entry (no row) ends a run too")
    func removalRuns() {
        func item(_ seq: UInt64, _ state: DeliveryState) -> DeliveryItem {
            DeliveryItem(seq: seq, priority: .routine, enqueuedAt: 0, state: state, reason: "fifo", hash: [UInt8(seq)])
        }
        var table = DeliveryTable()
        for seq: UInt64 in [3, 4, 6, 9] { table.items[seq] = item(seq, .removed) }
        table.items[7] = item(7, .pending)
        table.items[10] = item(10, .dlq)
        table.items[12] = item(12, .removed)
        let records = DeliveryLimits.takeRemovalRecords(&table)
        let ranges: [[UInt64]] = records.map { [$0.firstSeq, $0.lastSeq, $0.count] }
        // 5 was delivered: 3-4 and 6 are two runs, each record's count its whole range (a verifier bridges it).
        let expected: [[UInt64]] = [[3, 4, 2], [6, 6, 1], [9, 9, 1], [12, 12, 1]]
        #expect(ranges == expected)
        #expect(records.allSatisfy { $0.count == $0.lastSeq - $0.firstSeq + 1 })
        let hashes: [[UInt8]] = records.map(\.lastRemovedHash)
        #expect(hashes == [[4], [6], [9], [12]])
        #expect(Set(table.items.keys) == [7, 10])
    }

    @Test("the effective clock follows the wall clock within tolerance and the monotonic clock across jumps")
    func effectiveClock() {
        var clock = EffectiveClock(tolerance: .seconds(300))
        #expect(clock.now(wall: 1_000_000, monotonic: .zero) == 1_000_000)
        #expect(clock.now(wall: 1_060_000, monotonic: .seconds(60)) == 1_060_000)
        // +10 h jump: effective advances by the monotonic minute only.
        #expect(clock.now(wall: 1_120_000 + 36_000_000, monotonic: .seconds(120)) == 1_120_000)
        #expect(clock.jumps == 1)
        // After a restart the persisted time is a floor.
        var restarted = EffectiveClock(tolerance: .seconds(300), persisted: 5_000_000)
        #expect(restarted.now(wall: 1_000, monotonic: .zero) == 5_000_000)
    }
}
