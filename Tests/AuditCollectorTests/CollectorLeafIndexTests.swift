import AuditChain
import AuditCollector
import AuditWire
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// Which held entry is which leaf (docs/COLLECTOR-API.md section 1): the leaves are the held entries the tree covers
/// in seq order, except those accepted after the tree had passed their seq; the store finds a seq's leaf index and a
/// bundle's entries from one row per 256 leaves and the rare non-leaves.
@Suite struct CollectorLeafIndexTests {
    /// What the store says of a seq: its leaf index, or why it has none.
    static func leafIndex(
        _ store: CollectorStore,
        _ logId: [UInt8],
        _ seq: Int
    ) async throws -> Result<UInt64, TreeReadError> {
        do {
            return .success(try await store.leafIndex(logId: logId, seq: UInt64(seq)))
        } catch let error as TreeReadError {
            return .failure(error)
        }
    }

    /// Checks every seq up to `through`: `leaves` (in order) have their position as leaf index, `nonleaves` are held
    /// but not leaves, every other seq is not held; the tree's size and root are those of `leaves`.
    static func expectIndex(
        _ collector: Collector,
        _ chain: CollectorChain,
        leaves: [Int],
        nonleaves: Set<Int>,
        through: Int
    ) async throws {
        let head = try await collector.store.treeHead(logId: chain.logId)
        #expect(head.size == UInt64(leaves.count))
        #expect(head.root == MerkleTree(leaves: chain.serialized(leaves)).root())
        let position = Dictionary(uniqueKeysWithValues: leaves.enumerated().map { ($1, UInt64($0)) })
        for seq in 0...through {
            let found = try await Self.leafIndex(collector.store, chain.logId, seq)
            if let expected = position[seq] {
                #expect(found == .success(expected), "seq \(seq)")
            } else if nonleaves.contains(seq) {
                #expect((try? found.get()) == nil && (found.failureCode == .notALeaf), "seq \(seq): \(found)")
            } else {
                #expect(found.failureCode == .notHeld, "seq \(seq): \(found)")
            }
        }
    }

    /// A chain of 0 ... 800 with two removal records: 3 ... 4 (record at 6) and 300 ... 310 (record at 401).
    static func chainWithTwoRemovals() -> CollectorChain {
        var chain = CollectorChain()
        chain.appendEvents(5)  // 1...5
        chain.appendRemoval(first: 3, last: 4)  // 6
        chain.appendEvents(394)  // 7...400
        chain.appendRemoval(first: 300, last: 310)  // 401
        chain.appendEvents(399)  // 402...800
        return chain
    }

    static func post(_ client: CollectorClient, _ chain: CollectorChain, _ seqs: [Int]) async throws {
        for start in stride(from: 0, to: seqs.count, by: 500) {
            let reply = try await client.post(chain.batch(Array(seqs[start..<min(start + 500, seqs.count)])))
            let response = try #require(reply.response, "\(reply.status) \(reply.error ?? "")")
            #expect(response.results.allSatisfy { $0.status == .accepted }, "\(response.summary.prefix(3))")
        }
    }

    @Test("entries accepted inside bridged gaps after the tree passed them are held but not leaves, across bundles")
    func laterEntriesInsideBridgedGapsAreNotLeaves() async throws {
        let directory = CollectorTempDir()
        let chain = Self.chainWithTwoRemovals()
        let removed = Set([3, 4] + Array(300...310))
        try await withCollector(directory) { client, collector in
            try await Self.post(client, chain, (0...700).filter { !removed.contains($0) })
            // The device sends three of the removed entries anyway: held, never leaves.
            try await Self.post(client, chain, [3, 4, 305])
            try await Self.post(client, chain, Array(701...800))
            let leaves = (0...800).filter { !removed.contains($0) }
            try await Self.expectIndex(collector, chain, leaves: leaves, nonleaves: [3, 4, 305], through: 801)
            // Every bundle holds exactly its leaves.
            let reader = TreeReader(client: client, logId: chain.logId)
            #expect(try await reader.leaves(size: UInt64(leaves.count)) == chain.serialized(leaves))
        }
    }

    @Test("an older database without a tree gets its tree and its leaf index at the log's next batch")
    func olderDatabaseWithoutATree() async throws {
        let directory = CollectorTempDir()
        let chain = Self.chainWithTwoRemovals()
        try await withCollector(directory) { client, _ in
            try await Self.post(client, chain, [0, 1, 2, 5, 6, 7])
            try await Self.post(client, chain, [3])
        }
        // As a collector from before the tree left it: entries and head, no tree.
        let queue = try DatabaseQueue(path: directory.database)
        try await queue.write { db in
            try db.execute(
                sql: "DELETE FROM trees; DELETE FROM tree_tiles; DELETE FROM tree_bundles; DELETE FROM tree_nonleaves"
            )
        }
        try await withCollector(directory) { client, collector in
            #expect(try await collector.store.treeHead(logId: chain.logId).size == 0)
            try await Self.post(client, chain, Array(8...299))
            // Built at once from every held entry the head covers: 3 came before any tree, so it is a leaf.
            let leaves = [0, 1, 2, 3] + Array(5...299)
            try await Self.expectIndex(collector, chain, leaves: leaves, nonleaves: [], through: 300)
            let reader = TreeReader(client: client, logId: chain.logId)
            #expect(try await reader.leaves(size: UInt64(leaves.count)) == chain.serialized(leaves))
        }
    }

    @Test("a tree grown before the leaf index existed gets its index rebuilt when the database is opened")
    func treeWithoutIndexIsRebuiltAtOpen() async throws {
        let directory = CollectorTempDir()
        let chain = Self.chainWithTwoRemovals()
        let removed = Set([3, 4] + Array(300...310))
        let leaves = (0...600).filter { !removed.contains($0) }
        try await withCollector(directory) { client, _ in
            try await Self.post(client, chain, leaves)
            try await Self.post(client, chain, [4, 305])
        }
        // As the collector before the leaf index left it: the tree, without the index's tables (nor the record of
        // versioned migrations, which came later still).
        let queue = try DatabaseQueue(path: directory.database)
        try await queue.write { db in
            try db.execute(sql: "DROP TABLE tree_bundles; DROP TABLE tree_nonleaves; DROP TABLE schema_migrations")
        }
        try await withCollector(directory) { client, collector in
            try await Self.expectIndex(collector, chain, leaves: leaves, nonleaves: [4, 305], through: 601)
            // And it keeps growing from there.
            try await Self.post(client, chain, Array(601...800))
            let grown = (0...800).filter { !removed.contains($0) }
            try await Self.expectIndex(collector, chain, leaves: grown, nonleaves: [4, 305], through: 801)
        }
        // A tree its entries do not give is refused when opened, not served.
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM tree_bundles; DELETE FROM entries WHERE seq = 100")
        }
        #expect(throws: CollectorError.self) { try CollectorStore(path: directory.database) }
    }
}

extension Result where Failure == TreeReadError {
    var failureCode: TreeReadError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
