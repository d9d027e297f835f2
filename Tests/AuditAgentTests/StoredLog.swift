import AuditChain
import AuditCollector
import AuditWire
import Testing
import TestKit
import TransparencyLog

/// What a crashed collector left in its database, checked the same way on SQLite and PostgreSQL.
enum StoredLog {
    /// The stored tree is exactly the entries the head covers, in order and byte for byte the chain's, and the head
    /// is at or past `acknowledged` (nil: nothing was acknowledged, so there may be no head).
    static func expectIntact(
        _ directory: CollectorTempDir,
        _ chain: CollectorChain,
        acknowledged: UInt64?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let store = try await directory.openStore()
        do {
            try await check(store, chain, acknowledged: acknowledged, sourceLocation: sourceLocation)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    private static func check(
        _ store: CollectorStore,
        _ chain: CollectorChain,
        acknowledged: UInt64?,
        sourceLocation: SourceLocation
    ) async throws {
        guard let head = try await store.head(logId: chain.logId) else {
            #expect(acknowledged == nil, "acknowledged \(acknowledged ?? 0), no head", sourceLocation: sourceLocation)
            return
        }
        if let acknowledged {
            #expect(
                head.seq >= acknowledged,
                "acknowledged \(acknowledged), head \(head.seq)",
                sourceLocation: sourceLocation
            )
        }
        let held = try await store.entries(logId: chain.logId).filter { $0.seq <= head.seq }
        #expect(held.map(\.seq) == Array(0...head.seq), sourceLocation: sourceLocation)
        #expect(held.map(\.bytes) == chain.entries.prefix(held.count).map(\.serialized), sourceLocation: sourceLocation)
        let tree = try await store.treeHead(logId: chain.logId)
        #expect(tree.size == head.seq + 1, sourceLocation: sourceLocation)
        #expect(tree.root == MerkleTree(leaves: held.map(\.bytes)).root(), sourceLocation: sourceLocation)
    }

    /// The last receipt covers the whole chain: its head is the chain's last seq, and its checkpoint's size and root
    /// are the chain's.
    @discardableResult
    static func expectWholeChain(
        _ last: TreeReceipt?,
        _ chain: CollectorChain,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> TreeReceipt {
        let receipt = try #require(last, sourceLocation: sourceLocation)
        #expect(receipt.seq == UInt64(chain.entries.count - 1), sourceLocation: sourceLocation)
        let checkpoint = try Checkpoint(parsing: try SignedNote(parsing: Array(receipt.checkpoint.utf8)).text)
        #expect(checkpoint.size == UInt64(chain.entries.count), sourceLocation: sourceLocation)
        #expect(
            checkpoint.rootHash == MerkleTree(leaves: chain.entries.map(\.serialized)).root(),
            sourceLocation: sourceLocation
        )
        return receipt
    }
}
