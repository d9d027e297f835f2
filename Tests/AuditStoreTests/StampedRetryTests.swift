import AuditChain
@testable import AuditStore
import Foundation
import Testing
import TestKit

/// A producer's request without `occurredAt` is stamped at ingest, each arrival with its own time; repeated, it is
/// still a retry of the original (issue 31): the log compares what the producer sent. A different event under the
/// key stays refused, and a request that carried `occurredAt` is not taken for one that did not.
@Suite("Idempotency: requests without occurredAt")
struct StampedRetryTests {
    /// The request `LogFixture.event(key:duration:)` without `occurredAt`, stamped at `stamp` (ms since the epoch).
    static func stamped(_ key: String, at stamp: Int64, duration: Int64 = 412) -> ProducerEvent {
        var event = LogFixture.event(key: key, duration: duration)
        event.occurredAt = AuditTimestamp(millisecondsSinceEpoch: stamp)
        return ProducerEvent(event, occurredAtStamped: true)
    }

    @Test(
        "repeated with another stamp, it answers the original seq and writes nothing",
        arguments: LogFixture.Kind.allCases
    )
    func retryWithAnotherStamp(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(kind, in: directory)
        let first = try await log.append([Self.stamped("k", at: 1_795_000_000_000)])
        let rows = try log.storage.deliveryTable().items.count
        let retry = try await log.append([Self.stamped("k", at: 1_795_000_009_999)])
        #expect(retry == first.map { AppendReceipt(seq: $0.seq, entryHash: $0.entryHash, isDuplicate: true) })
        #expect(try LogFixture.eventCount(log) == 1)
        #expect(try log.storage.deliveryTable().items.count == rows)
        // The sealed event keeps the first stamp.
        #expect(try LogFixture.events(log).map(\.occurredAt.millisecondsSinceEpoch) == [1_795_000_000_000])
    }

    @Test("a different event under the key is refused, stamped or not", arguments: LogFixture.Kind.allCases)
    func differentEventIsRefused(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(kind, in: directory)
        _ = try await log.append([Self.stamped("k", at: 1_795_000_000_000)])
        let other = await #expect(throws: IdempotencyConflict.self) {
            try await log.append([Self.stamped("k", at: 1_795_000_000_500, duration: 7)])
        }
        #expect(other?.code == .differentEvent && other?.seq == 1)
        // The producer's own occurredAt, other than the stamp: a different request.
        var explicit = LogFixture.event(key: "k")
        explicit.occurredAt = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_500)
        await #expect(throws: IdempotencyConflict.self) { try await log.append([explicit]) }
        // The stamp itself, given by the producer: the same bytes, a retry (as before).
        explicit.occurredAt = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)
        #expect(try await log.append([explicit]).map(\.isDuplicate) == [true])

        // An original that carried occurredAt is not repeated by a request that leaves it out.
        _ = try await log.append([LogFixture.event(key: "explicit")])
        let unstamped = await #expect(throws: IdempotencyConflict.self) {
            try await log.append([Self.stamped("explicit", at: 1_795_000_000_700)])
        }
        #expect(unstamped?.code == .differentEvent && unstamped?.seq == 2)
        #expect(try LogFixture.eventCount(log) == 2)
    }

    @Test("after the log is reopened (an agent restart), the retry still answers the original seq")
    func retryAfterReopen() async throws {
        let directory = try TemporaryDirectory()
        let original = try await LogFixture.log(.sqlite, in: directory)
        let first = try await original.append([Self.stamped("restart", at: 1_795_000_000_000)])
        let reopened = try AuditLog(
            storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
            keys: LogFixture.keys(directory)
        )
        let retry = try await reopened.append([Self.stamped("restart", at: 1_795_000_060_000)])
        #expect(retry.map(\.seq) == first.map(\.seq) && retry.map(\.isDuplicate) == [true])
        await #expect(throws: IdempotencyConflict.self) {
            try await reopened.append([Self.stamped("restart", at: 1_795_000_060_000, duration: 1)])
        }
        #expect(try LogFixture.eventCount(reopened) == 1)
    }

    @Test("within one append and across a group commit, differently stamped repeats make one entry")
    func repeatsInOneCommit() async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(.sqlite, in: directory)
        let receipts = try await log.append([
            Self.stamped("a", at: 1_795_000_000_000), Self.stamped("a", at: 1_795_000_000_001),
        ])
        #expect(receipts.map(\.seq) == [1, 1] && receipts.map(\.isDuplicate) == [false, true])
        let error = await #expect(throws: IdempotencyConflict.self) {
            try await log.append([Self.stamped("b", at: 1), Self.stamped("b", at: 2, duration: 3)])
        }
        #expect(error?.code == .repeatedInAppend)
        let concurrent = try await withThrowingTaskGroup(of: [AppendReceipt].self) { group in
            for index in 0..<32 {
                group.addTask { try await log.append([Self.stamped("storm", at: 1_795_000_000_000 + Int64(index))]) }
            }
            var all: [[AppendReceipt]] = []
            for try await receipts in group { all.append(receipts) }
            return all
        }
        #expect(Set(concurrent.map { $0[0].seq }).count == 1)
        #expect(concurrent.count { !$0[0].isDuplicate } == 1)
        #expect(try LogFixture.eventCount(log) == 2)
    }
}
