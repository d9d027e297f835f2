import AuditChain
import Foundation
import GRDB
import TransparencyLog

/// Each log's RFC 6962 Merkle tree (docs/TRANSPARENCY.md): its leaves are the serialized entries the contiguous
/// head covers, in seq order; it grows in the ingest transaction, right after the head advances, so the tree and
/// the entries are never apart. Stored as tlog-tiles (``MerkleTiles``): 256 hashes of every eighth level per row.
extension CollectorStore {
    /// The size of a log's tree and the last seq its leaves cover.
    struct TreeState: Sendable, Equatable {
        var size: UInt64
        var coveredSeq: UInt64?
    }

    static func treeState(_ db: Database, logId: [UInt8]) throws -> TreeState {
        guard
            let row = try Row.fetchOne(
                db,
                sql: "SELECT size, coveredSeq FROM trees WHERE logId = ?",
                arguments: [Data(logId)]
            )
        else { return TreeState(size: 0, coveredSeq: nil) }
        return TreeState(size: try row.unsigned("size"), coveredSeq: try row.unsigned("coveredSeq"))
    }

    /// A log's tree over its stored tiles (``MerkleTiles``).
    static func treeTiles(_ db: Database, logId: [UInt8]) throws -> MerkleTiles {
        let statement = try db.cachedStatement(
            sql: "SELECT hashes FROM tree_tiles WHERE logId = ? AND level = ? AND idx = ?"
        )
        return MerkleTiles { level, index in
            let hashes = try Data.fetchOne(statement, arguments: [Data(logId), level, Int64(bitPattern: index)])
            return hashes.map { Array($0) } ?? []
        }
    }

    /// Appends to the tree every held entry the head covers and the tree does not: seqs above `coveredSeq` up to
    /// the head, in order. An entry accepted later at or below `coveredSeq` (inside a gap a removal record bridged)
    /// is not a leaf: the tree only grows at its end. Each level's right-edge tile is written once per chunk of
    /// 4 096 entries, and the seq of every leaf whose index is a multiple of 256 goes to `tree_bundles` (the leaf
    /// index, ``recordBundles(_:logId:leaves:from:)``).
    @discardableResult
    /// - Parameter known: serialized entries by seq the caller holds in memory (the batch just stored), so that
    ///   only older entries are read back.
    static func growTree(
        _ db: Database,
        logId: [UInt8],
        head: CollectorHead,
        known: [UInt64: [UInt8]] = [:]
    ) throws -> TreeState {
        var state = try treeState(db, logId: logId)
        if let covered = state.coveredSeq, covered >= head.seq { return state }
        let write = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO tree_tiles (logId, level, idx, hashes) VALUES (?, ?, ?, ?)"
        )
        var after: Int64 = state.coveredSeq.map { Int64(bitPattern: $0) } ?? -1
        while true {
            let seqs = try Int64.fetchAll(
                db,
                sql: "SELECT seq FROM entries WHERE logId = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT 4096",
                arguments: [Data(logId), after, Int64(bitPattern: head.seq)]
            )
            guard let last = seqs.last else { break }
            let read = try db.cachedStatement(sql: "SELECT bytes FROM entries WHERE logId = ? AND seq = ?")
            let tiles = try treeTiles(db, logId: logId)
            let leaves = try seqs.map { seq in
                if let bytes = known[UInt64(bitPattern: seq)] { return MerkleHash.leaf(bytes) }
                guard let bytes = try Data.fetchOne(read, arguments: [Data(logId), seq]) else {
                    throw CollectorError(.corruptState, "entry \(seq) of log \(Hex.encode(logId)) vanished")
                }
                return MerkleHash.leaf(bytes)
            }
            try recordBundles(db, logId: logId, leaves: seqs, from: state.size)
            for tile in try tiles.append(leafHashes: leaves, toSize: state.size) {
                try write.execute(arguments: [
                    Data(logId), tile.level, Int64(bitPattern: tile.index), Data(tile.hashes),
                ])
            }
            state.size += UInt64(seqs.count)
            after = last
            if seqs.count < 4096 { break }
        }
        state.coveredSeq = head.seq
        try db.execute(
            sql: "INSERT OR REPLACE INTO trees (logId, size, coveredSeq) VALUES (?, ?, ?)",
            arguments: [Data(logId), Int64(bitPattern: state.size), Int64(bitPattern: head.seq)]
        )
        return state
    }

    /// A log's tree: its size and root (the empty tree's root while it has no leaf).
    public func treeHead(logId: [UInt8]) async throws -> (size: UInt64, root: [UInt8]) {
        try await pool.read { db in
            let size = try Self.treeState(db, logId: logId).size
            let tiles = try Self.treeTiles(db, logId: logId)
            return (size, try tiles.nodes().root(size: size))
        }
    }

    /// The inclusion proof of leaf `index` in the log's tree at `size` leaves.
    /// - Throws: `MerkleNodes.OutOfRange` unless `index < size <= ` the tree's size.
    public func inclusionProof(logId: [UInt8], index: UInt64, size: UInt64) async throws -> [[UInt8]] {
        try await pool.read { db in
            guard index < size, size <= (try Self.treeState(db, logId: logId)).size else {
                throw MerkleNodes.OutOfRange(description: "no leaf \(index) in a tree of size \(size) of this log")
            }
            let tiles = try Self.treeTiles(db, logId: logId)
            return try tiles.nodes().inclusionProof(index: index, size: size)
        }
    }

    /// The consistency proof of the log's tree from `first` to `second` leaves.
    /// - Throws: `MerkleNodes.OutOfRange` unless `0 < first < second <= ` the tree's size.
    public func consistencyProof(logId: [UInt8], first: UInt64, second: UInt64) async throws -> [[UInt8]] {
        try await pool.read { db in
            guard 0 < first, first < second, second <= (try Self.treeState(db, logId: logId)).size else {
                throw MerkleNodes.OutOfRange(description: "no consistency proof from \(first) to \(second) in this log")
            }
            let tiles = try Self.treeTiles(db, logId: logId)
            return try tiles.nodes().consistencyProof(first: first, second: second)
        }
    }
}
