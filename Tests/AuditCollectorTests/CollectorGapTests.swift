import AuditChain
import AuditCollector
import Testing
import AuditWire
import TestKit

/// Gaps and accounted removals: the head never passes a gap no removal record bridges.
@Suite struct CollectorGapTests {
    @Test(arguments: CollectorEngine.underTest) func gapHoldsTheHeadUntilALaterRemovalRecordBridgesIt(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(5)  // 1...5
        chain.appendRemoval(first: 3, last: 4)  // 6: entries 3 and 4 left delivery
        chain.appendEvents(1)  // 7
        try await withCollector(directory) { client, collector in
            let first = try #require(try await client.post(chain.batch([0, 1, 2, 5])).response)
            #expect(first.results.allSatisfy { $0.status == .accepted })
            #expect(first.treeReceipt?.seq == 2)
            let stuck = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(stuck["seq"] == .integer(2))
            #expect(stuck["highestSeq"] == .integer(5))
            #expect(stuck["gaps"] == .array([.object(["from": .integer(3), "to": .integer(4)])]))

            let second = try #require(try await client.post(chain.batch([6, 7])).response)
            #expect(second.summary == ["6:accepted:200", "7:accepted:200"])
            let receipt = try #require(second.treeReceipt)
            #expect(receipt.seq == 7)
            #expect(receipt.entryHash == chain.entries[7].entryHash)
            let bridged = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(bridged["seq"] == .integer(7))
            #expect(bridged["gaps"] == .array([]))
            #expect(try await collector.store.count(logId: chain.logId) == 6)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func removalThatDoesNotCoverTheGapLeavesTheHead(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(5)  // 1...5
        chain.appendRemoval(first: 4, last: 4)  // 6: only entry 4 is accounted for
        try await withCollector(directory) { client, _ in
            let reply = try #require(try await client.post(chain.batch([0, 1, 2, 5, 6])).response)
            #expect(reply.results.allSatisfy { $0.status == .accepted })
            #expect(reply.treeReceipt?.seq == 2)
            let head = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(head["gaps"] == .array([.object(["from": .integer(3), "to": .integer(4)])]))
            // Entry 3 arrives: the head passes it and then the bridged gap at 4.
            let late = try #require(try await client.post(chain.batch([3])).response)
            #expect(late.treeReceipt?.seq == 6)
        }
    }
}

/// The head advancement on its own, over an in-memory set of held entries.
@Suite struct CollectorHeadAdvancerTests {
    /// The span a removal record sealed as `record` states for `range` of `chain`, `count` of its entries removed.
    static func span(
        record: UInt64,
        _ range: ClosedRange<UInt64>,
        count: UInt64,
        of chain: CollectorChain
    )
        -> RemovalSpan
    {
        RemovalSpan(
            recordSeq: record,
            firstSeq: range.lowerBound,
            lastSeq: range.upperBound,
            count: count,
            lastRemovedHash: chain.entries[Int(range.upperBound)].entryHash
        )
    }

    @Test func nonContiguousRemovalNeedsTheEntriesItDidNotRemove() throws {
        var chain = CollectorChain()
        chain.appendEvents(6)  // 1...6
        // Entries 2 and 4 were removed (count 2 of range 2...4); 3 stays to be delivered.
        let removal = Self.span(record: 7, 2...4, count: 2, of: chain)
        var held = MemoryChain(entries: [0, 1, 5, 6].map { chain.entries[$0] }, removals: [removal])
        #expect(try HeadAdvancer.advance(nil, in: &held)?.seq == 1)
        held.add(chain.entries[3])
        let head = try HeadAdvancer.advance(CollectorHead(seq: 1, hash: chain.entries[1].entryHash), in: &held)
        #expect(head == CollectorHead(seq: 6, hash: chain.entries[6].entryHash))
    }

    @Test func adjacentRunsSealedAtDifferentTimesBridgeOneAfterTheOther() throws {
        var chain = CollectorChain()
        chain.appendEvents(6)  // 1...6
        // Run 1...2 left first (record 7); run 3...5 left later (record 8): the entry after the first run is gone.
        let first = Self.span(record: 7, 1...2, count: 2, of: chain)
        let second = Self.span(record: 8, 3...5, count: 3, of: chain)
        var held = MemoryChain(entries: [0, 6].map { chain.entries[$0] }, removals: [first, second])
        #expect(try HeadAdvancer.advance(nil, in: &held) == CollectorHead(seq: 6, hash: chain.entries[6].entryHash))
        // Until a held entry links to the end of the chain of bridges, the head stays where one last confirmed it.
        var alone = MemoryChain(entries: [0, 6].map { chain.entries[$0] }, removals: [first])
        #expect(try HeadAdvancer.advance(nil, in: &alone) == CollectorHead(seq: 0, hash: chain.entries[0].entryHash))
        var wrong = second
        wrong.lastRemovedHash = chain.entries[4].entryHash
        var broken = MemoryChain(entries: [0, 6].map { chain.entries[$0] }, removals: [first, wrong])
        #expect(try HeadAdvancer.advance(nil, in: &broken)?.seq == 0)
    }

    @Test func removalWhoseHashDoesNotLinkDoesNotBridge() throws {
        var chain = CollectorChain()
        chain.appendEvents(4)
        var wrong = Self.span(record: 5, 2...2, count: 1, of: chain)
        wrong.lastRemovedHash = [UInt8](repeating: 1, count: 32)
        var held = MemoryChain(entries: [0, 1, 3, 4].map { chain.entries[$0] }, removals: [wrong])
        #expect(try HeadAdvancer.advance(nil, in: &held)?.seq == 1)
        var empty = MemoryChain(entries: [chain.entries[1]], removals: [])
        #expect(try HeadAdvancer.advance(nil, in: &empty) == nil)
    }
}

/// Held entries in memory.
struct MemoryChain: HeldChain {
    var links: [UInt64: (entryHash: [UInt8], prevHash: [UInt8])] = [:]
    var spans: [RemovalSpan]

    init(entries: [SealedEntry], removals: [RemovalSpan]) {
        spans = removals
        for entry in entries { add(entry) }
    }

    mutating func add(_ entry: SealedEntry) { links[entry.header.seq] = (entry.entryHash, entry.header.prevHash) }

    mutating func link(at seq: UInt64) throws -> (entryHash: [UInt8], prevHash: [UInt8])? { links[seq] }

    mutating func nextHeld(after seq: UInt64) throws -> UInt64? {
        links.keys.filter { $0 > seq }.min()
    }

    mutating func removals(covering seq: UInt64) throws -> [RemovalSpan] {
        spans.filter { $0.firstSeq <= seq && seq <= $0.lastSeq }
    }

    mutating func heldCount(in range: ClosedRange<UInt64>) throws -> UInt64 {
        UInt64(links.keys.filter { range.contains($0) }.count)
    }
}
