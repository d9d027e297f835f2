import AuditChain
import Foundation
import TransparencyLog

/// What a version 2 receipt is made of (docs/PROTOCOL.md section 3.2), read from one state of the log's tree.
public struct TreeReceiptParts: Sendable, Equatable {
    /// The tree's size.
    public var size: UInt64
    /// Its root hash.
    public var root: [UInt8]
    /// The seq of the last leaf: the contiguous head.
    public var seq: UInt64
    /// The head's entry hash.
    public var entryHash: [UInt8]
    /// The inclusion proof of the last leaf (index `size - 1`).
    public var inclusion: [[UInt8]]
    /// The consistency proof from the size asked for, when it is between 0 and `size` (both excluded).
    public var consistency: [[UInt8]]?
}

extension CollectorStore {
    /// The parts of a receipt for the log's tree as it is now; nil while the tree is empty.
    /// - Parameter from: the tree size of the agent's last verified checkpoint, for the consistency proof.
    /// - Throws: ``CollectorError`` when the stored tree and head disagree, or a database error.
    public func treeReceiptParts(logId: [UInt8], from: UInt64?) async throws -> TreeReceiptParts? {
        if let parts = try await database.read({ db in try Self.treeReceiptParts(db, logId: logId, from: from) }) {
            return parts
        }
        // The tree does not cover the head: a database from before the tree, answered before any new batch.
        return try await database.write(log: logId) { db in
            guard let head = try Self.head(db, logId: logId) else { return nil }
            try Self.growTree(db, logId: logId, head: head)
            return try Self.treeReceiptParts(db, logId: logId, from: from)
        }
    }

    /// The parts of a receipt for the log's tree as a transaction committed it: its size, root and proofs computed
    /// from the tiles read now (a stored tile's hashes are never rewritten, so tiles read after later commits give
    /// the same tree at that size); nil when that tree is empty or does not cover its head.
    func treeReceiptParts(logId: [UInt8], from: UInt64?, committed: CommittedTree) async throws -> TreeReceiptParts? {
        try await database.read { db in
            try Self.treeReceiptParts(db, logId: logId, from: from, current: (committed.tree, committed.head))
        }
    }

    /// nil when the tree is empty or does not cover the head yet.
    /// - Parameter current: the log's tree state and head as this transaction last wrote them, if the caller has
    ///   them (else they are read).
    static func treeReceiptParts(
        _ db: any SQLSession,
        logId: [UInt8],
        from: UInt64?,
        current: (tree: TreeState, head: CollectorHead)? = nil
    ) throws -> TreeReceiptParts? {
        let state = try current?.tree ?? treeState(db, logId: logId)
        guard state.size > 0, let head = try current?.head ?? head(db, logId: logId), state.coveredSeq == head.seq
        else { return nil }
        let nodes = try treeTiles(db, logId: logId).nodes()
        var consistency: [[UInt8]]?
        if let from, from > 0, from < state.size {
            consistency = try nodes.consistencyProof(first: from, second: state.size)
        }
        return TreeReceiptParts(
            size: state.size,
            root: try nodes.root(size: state.size),
            seq: head.seq,
            entryHash: head.hash,
            inclusion: try nodes.inclusionProof(index: state.size - 1, size: state.size),
            consistency: consistency
        )
    }
}
