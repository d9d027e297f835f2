import AuditChain
@testable import AuditStore
import Foundation
import Testing
import TestKit

/// De-duplication on the events' idempotency keys: a retry answers the original seq and writes nothing; the same
/// key with another event is refused; on both storages, across group commits and reopenings.
@Suite("Idempotency")
struct IdempotencyTests {
    @Test(
        "a retry answers the original receipt and writes nothing: no entry, no delivery row",
        arguments: LogFixture.Kind.allCases
    )
    func sequentialRetry(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(kind, in: directory)
        let first = try await log.append([LogFixture.event(key: "unlock-1")])
        let rows = try log.storage.deliveryTable().items.count
        let retry = try await log.append([LogFixture.event(key: "unlock-1")])
        #expect(first.map(\.seq) == [1])
        #expect(retry.map(\.seq) == [1])
        #expect(retry[0].entryHash == first[0].entryHash)
        #expect(!first[0].isDuplicate && retry[0].isDuplicate)
        #expect(try log.info().head.seq == 1)
        #expect(try log.storage.deliveryTable().items.count == rows)
        // Another key is another event.
        #expect(try await log.append([LogFixture.event(key: "unlock-2")]).map(\.seq) == [2])
    }

    @Test(
        "many concurrent appends of one key, sharing group commits, leave one entry",
        arguments: LogFixture.Kind.allCases
    )
    func concurrentRetries(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(kind, in: directory)
        let receipts = try await withThrowingTaskGroup(of: [AppendReceipt].self) { group in
            for index in 0..<64 {
                // Every fourth task also appends an event of its own in the same call.
                let events =
                    [LogFixture.event(key: "same")] + (index % 4 == 0 ? [LogFixture.event(key: "own-\(index)")] : [])
                group.addTask { try await log.append(events) }
            }
            var all: [[AppendReceipt]] = []
            for try await receipts in group { all.append(receipts) }
            return all
        }
        let seqs = Set(receipts.map { $0[0].seq })
        #expect(seqs.count == 1)
        #expect(receipts.filter { !$0[0].isDuplicate }.count == 1)
        #expect(try LogFixture.eventCount(log) == 1 + 16)
        let report = try LogFixture.verify(log)
        #expect(report.isClean, "\(report.problems)")
    }

    @Test("after the log is reopened (an agent restart), a retry still answers the original seq")
    func retryAfterReopen() async throws {
        let directory = try TemporaryDirectory()
        let original = try await LogFixture.log(.sqlite, in: directory)
        let first = try await original.append([LogFixture.event(key: "restart")])
        let reopened = try AuditLog(
            storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
            keys: LogFixture.keys(directory)
        )
        let retry = try await reopened.append([LogFixture.event(key: "restart")])
        #expect(retry.map(\.seq) == first.map(\.seq))
        #expect(retry[0].isDuplicate)
        #expect(try LogFixture.eventCount(reopened) == 1)
    }

    @Test(
        "the same key with a different event is refused, naming the seq that holds it",
        arguments: LogFixture.Kind.allCases
    )
    func differentEventIsRefused(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(kind, in: directory)
        _ = try await log.append([LogFixture.event(key: "k")])
        let error = await #expect(throws: IdempotencyConflict.self) {
            try await log.append([LogFixture.event(key: "fresh"), LogFixture.event(key: "k", duration: 413)])
        }
        #expect(error?.code == .differentEvent)
        #expect(error?.seq == 1)
        #expect(error?.index == 1)
        #expect(error?.description.contains("\"k\"") == false)
        // Nothing of the refused append was written, and its other key stays free.
        #expect(try log.info().head.seq == 1)
        #expect(try await log.append([LogFixture.event(key: "fresh")]).map(\.seq) == [2])
        // The same event at another time is another event too.
        var later = LogFixture.event(key: "k")
        later.occurredAt = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_001)
        await #expect(throws: IdempotencyConflict.self) { try await log.append([later]) }
    }

    @Test("a retry is recognised across a key rotation; once the original's data key is gone it is refused")
    func acrossRotation() async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(.sqlite, in: directory)
        let first = try await log.append([LogFixture.event(key: "rotated")])
        let oldKey = try #require(try log.keys.allDataKeys().first).id
        _ = try await log.rotateKeys(reason: "test")
        #expect(
            try await log.append([LogFixture.event(key: "rotated")])
                == first.map { AppendReceipt(seq: $0.seq, entryHash: $0.entryHash, isDuplicate: true) }
        )
        // Crypto-shredding the old data key erases what the retry would be compared with.
        try FileManager.default.removeItem(atPath: directory.path + "/keys/" + KeyStore.dataFileName(oldKey))
        let reopened = try AuditLog(
            storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
            keys: LogFixture.keys(directory)
        )
        let error = await #expect(throws: IdempotencyConflict.self) {
            try await reopened.append([LogFixture.event(key: "rotated")])
        }
        #expect(error?.code == .cannotCompare && error?.seq == first[0].seq)
    }

    @Test("a key repeated within one append: the same event is written once, another event refuses the append")
    func repeatedWithinOneAppend() async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(.sqlite, in: directory)
        let receipts = try await log.append([
            LogFixture.event(key: "a"), LogFixture.event(key: "b"), LogFixture.event(key: "a"),
        ])
        #expect(receipts.map(\.seq) == [1, 2, 1])
        #expect(receipts.map(\.isDuplicate) == [false, false, true])
        let error = await #expect(throws: IdempotencyConflict.self) {
            try await log.append([LogFixture.event(key: "c"), LogFixture.event(key: "c", duration: 1)])
        }
        #expect(error?.code == .repeatedInAppend)
        #expect(error?.earlierIndex == 0 && error?.index == 1)
        #expect(try log.info().head.seq == 2)
        #expect(try await log.append([LogFixture.event(key: "c", duration: 1)]).map(\.seq) == [3])
    }

    @Test(
        "a refused append in a group commit refuses only itself; the others commit",
        arguments: LogFixture.Kind.allCases
    )
    func conflictInAGroupCommit(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(kind, in: directory)
        _ = try await log.append([LogFixture.event(key: "taken")])
        let outcomes = await withTaskGroup(of: Result<[AppendReceipt], any Error>.self) { group in
            for index in 0..<32 {
                let events =
                    index % 2 == 0
                    ? [LogFixture.event(key: "new-\(index)"), LogFixture.event(key: "taken", duration: 9)]
                    : [LogFixture.event(key: "good-\(index)"), LogFixture.event(key: "taken")]
                group.addTask {
                    do { return .success(try await log.append(events)) } catch { return .failure(error) }
                }
            }
            var all: [Result<[AppendReceipt], any Error>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let accepted = outcomes.compactMap { try? $0.get() }
        #expect(accepted.count == 16)
        #expect(accepted.allSatisfy { $0[1].seq == 1 && $0[1].isDuplicate })
        #expect(outcomes.count { ($0.failure as? IdempotencyConflict)?.seq == 1 } == 16)
        #expect(try LogFixture.eventCount(log) == 1 + 16)
        // The refused batches' new keys were not taken.
        #expect(try await log.append([LogFixture.event(key: "new-0")]).first?.isDuplicate == false)
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
