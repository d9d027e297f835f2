import AuditChain
@testable import AuditStore
import Foundation
import Testing
import TestKit

/// Scoped loading must never change a decision: the SQL loads what `DeliveryTable.scoped` defines, and the limits
/// decide the same on a `.limits` load as on the whole table.
@Suite("DeliveryScope")
struct DeliveryScopeTests {
    /// A deterministic generator (SplitMix64), so a failure names a case that can be run again.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let now: Int64 = 1_800_000_000_000

    /// A table of up to 60 rows over sparse sequence numbers, every priority and state, ages around the limit.
    static func randomTable(_ random: inout SeededGenerator) -> DeliveryTable {
        var table = DeliveryTable()
        var seq = UInt64.random(in: 0...3, using: &random)
        for _ in 0..<Int.random(in: 0...60, using: &random) {
            let state: DeliveryState = [.pending, .pending, .pending, .pending, .dlq, .removed].randomElement(
                using: &random
            )!
            let age = Int64.random(in: 0...(100 * 3_600_000), using: &random)
            table.items[seq] = DeliveryItem(
                seq: seq,
                priority: DeliveryPriority.allCases.randomElement(using: &random)!,
                enqueuedAt: now - age,
                attempts: Int.random(in: 0...3, using: &random),
                state: state,
                reason: state == .pending ? "" : ["rejected", "fifo", "purged"].randomElement(using: &random)!,
                detail: state == .pending ? "" : "HTTP \(Int.random(in: 400...499, using: &random))",
                hash: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) },
                changedAt: now - Int64.random(in: 0...1000, using: &random)
            )
            seq += UInt64.random(in: 1...3, using: &random)
        }
        return table
    }

    static func randomPolicy(_ random: inout SeededGenerator) -> DeliveryPolicy {
        var policy = DeliveryPolicy()
        policy.maxEvents = Int.random(in: 0...40, using: &random)
        policy.maxDeadLetters = Int.random(in: 0...8, using: &random)
        policy.maxAge = .seconds(Int64.random(in: 1...90, using: &random) * 3600)
        return policy
    }

    /// Replaces the whole delivery table of `storage`.
    static func store(_ table: DeliveryTable, in storage: any LogStorage) async throws {
        try await storage.withDelivery(scope: .all) { _, current, _ in
            current = table
            return (LogAppend(entries: [], metadata: [:]), ())
        }
    }

    /// Limits then removal records, as a delivery cycle runs them.
    static func runLimits(_ table: inout DeliveryTable, policy: DeliveryPolicy) -> LimitsOutcome {
        let removed = DeliveryLimits.enforce(&table, now: now, policy: policy)
        let records = DeliveryLimits.takeRemovalRecords(&table)
        return LimitsOutcome(removed: removed, records: records.map { "\($0)" }, pending: table.count(.pending))
    }

    struct LimitsOutcome: Hashable {
        var removed: [String: Int]
        var records: [String]
        var pending: Int
    }

    @Test(
        "SQLite loads exactly the rows the pure definition names, and counts the rest where the scope counts",
        arguments: 0..<4
    )
    func sqliteMatchesDefinition(round: Int) async throws {
        let directory = try TemporaryDirectory()
        let storage = try SQLiteLogStorage(path: directory.path + "/log.sqlite")
        var random = SeededGenerator(state: UInt64(round) &* 7919 &+ 17)
        for _ in 0..<40 {
            let full = Self.randomTable(&random)
            let policy = Self.randomPolicy(&random)
            try await Self.store(full, in: storage)
            let seqs = full.items.keys.filter { _ in Bool.random(using: &random) } + [9_999, 10_000]
            let scopes: [DeliveryScope] = [
                .all, .counts, .rows(seqs), .rows([]), .head(Int.random(in: 0...30, using: &random)),
                .lowest(Int.random(in: 0...5, using: &random)),
                .limits(now: Self.now, policy: policy),
            ]
            for scope in scopes {
                let loaded = try storage.deliveryTable(scope: scope)
                #expect(loaded == full.scoped(scope), "\(scope)")
                // Scopes that count are exact; the others count only what they loaded.
                let reference = scope.counts ? full : DeliveryTable(items: loaded.items)
                for state in [DeliveryState.pending, .dlq, .removed] {
                    #expect(loaded.count(state) == reference.count(state), "\(scope)")
                }
                #expect(loaded.pendingEvents == reference.pendingEvents)
                #expect(loaded.items.values.allSatisfy { full.items[$0.seq] == $0 })
            }
        }
    }

    @Test("the limits decide the same on a .limits load as on the whole table", arguments: 0..<4)
    func limitsOnScopedLoad(round: Int) throws {
        var random = SeededGenerator(state: UInt64(round) &* 104_729 &+ 3)
        var removals = 0
        for _ in 0..<300 {
            let full = Self.randomTable(&random)
            let policy = Self.randomPolicy(&random)
            var whole = full
            let expected = Self.runLimits(&whole, policy: policy)
            let old = full.scoped(.limits(now: Self.now, policy: policy))
            var scoped = old
            let outcome = Self.runLimits(&scoped, policy: policy)
            #expect(outcome == expected)
            // Writing the scoped changes back gives the table the whole-table run left.
            var merged = full
            let (deleted, upserted) = scoped.changes(from: old)
            for seq in deleted { merged.items[seq] = nil }
            for item in upserted { merged.items[item.seq] = item }
            #expect(merged == whole)
            removals += expected.records.count
        }
        // The random cases do exercise removals (not only empty outcomes).
        #expect(removals > 100)
    }

    @Test("a .limits load of a large backlog with nothing to remove loads no pending row")
    func limitsLoadIsSmall() {
        var table = DeliveryTable()
        for seq in UInt64(0)..<5000 {
            table.items[seq] = DeliveryItem(
                seq: seq,
                priority: seq == 0 ? .pinned : .critical,
                enqueuedAt: Self.now - 1000,
                hash: [UInt8](repeating: 1, count: 32)
            )
        }
        table.items[77]?.state = .dlq
        var policy = DeliveryPolicy()
        policy.maxEvents = 10_000
        let loaded = table.scoped(.limits(now: Self.now, policy: policy))
        #expect(Set(loaded.items.keys) == [77])
        #expect(loaded.count(.pending) == 4999)
        #expect(loaded.pendingEvents == 4998)
        // Over the limit by 3: the 3 oldest events are loaded besides the DLQ row, nothing between them.
        policy.maxEvents = 4995
        let over = table.scoped(.limits(now: Self.now, policy: policy))
        #expect(Set(over.items.keys) == Set([1, 2, 3, 77]))
        var copy = over
        #expect(DeliveryLimits.enforce(&copy, now: Self.now, policy: policy) == ["fifo": 3])
    }

    @Test("the memory storage writes back only the rows of the scope")
    func memoryWriteBack() async throws {
        let storage = MemoryLogStorage()
        var random = SeededGenerator(state: 99)
        let full = Self.randomTable(&random)
        try await Self.store(full, in: storage)
        let first = try #require(full.items.keys.min())
        try await storage.withDelivery(scope: .rows([first])) { _, table, _ in
            #expect(table.items.count == 1)
            table.items[first] = nil
            return (LogAppend(entries: [], metadata: [:]), ())
        }
        var expected = full
        expected.items[first] = nil
        #expect(try storage.deliveryTable() == expected)
    }
}
