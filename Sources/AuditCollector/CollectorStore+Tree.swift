import AuditChain
import Foundation
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

    static func treeState(_ db: any SQLSession, logId: [UInt8]) throws -> TreeState {
        guard let row = try db.row("SELECT size, coveredSeq FROM trees WHERE logId = ?", [.blob(logId)]) else {
            return TreeState(size: 0, coveredSeq: nil)
        }
        return TreeState(size: try row.unsigned("size"), coveredSeq: try row.unsigned("coveredSeq"))
    }

    /// A log's tree over its stored tiles (``MerkleTiles``).
    static func treeTiles(_ db: any SQLSession, logId: [UInt8]) throws -> MerkleTiles {
        // Each tile is read once per use of the tiles (a receipt's root and two proofs read the same right-edge
        // tiles): the transaction sees one state, so a tile read again would be the same bytes.
        let cache = TileCache()
        return MerkleTiles { level, index in
            if let tile = cache.tiles[TileCache.Key(level: level, index: index)] { return tile }
            let tile = try storedTile(db, logId: logId, level: level, index: index)
            cache.tiles[TileCache.Key(level: level, index: index)] = tile
            return tile
        }
    }

    /// Appends to the tree every held entry the head covers and the tree does not: seqs above `coveredSeq` up to
    /// the head, in order. An entry accepted later at or below `coveredSeq` (inside a gap a removal record bridged)
    /// is not a leaf: the tree only grows at its end. Each level's right-edge tile is written once per chunk of
    /// 4 096 entries, and the seq of every leaf whose index is a multiple of 256 goes to `tree_bundles` (the leaf
    /// index, ``recordBundles(_:logId:leaves:from:)``).
    @discardableResult
    /// - Parameters:
    ///   - known: serialized entries by seq the caller holds in memory (the batch just stored), so that only older
    ///     entries are read back; when they are every seq the tree grows by, nothing is read back.
    ///   - state: the tree's state as read in this transaction, if the caller has it.
    static func growTree(
        _ db: any SQLSession,
        logId: [UInt8],
        head: CollectorHead,
        known: [UInt64: [UInt8]] = [:],
        state read: TreeState? = nil
    ) throws -> TreeState {
        var state = try read ?? treeState(db, logId: logId)
        if let covered = state.coveredSeq, covered >= head.seq { return state }
        var after: Int64 = state.coveredSeq.map { Int64(bitPattern: $0) } ?? -1
        while true {
            let from = UInt64(bitPattern: after &+ 1)
            let seqs: [Int64]
            if from <= head.seq, head.seq - from < 4096, (from...head.seq).allSatisfy({ known[$0] != nil }) {
                // Every seq up to the head was stored by this batch: those are the leaves, none else is held there.
                seqs = (from...head.seq).map { Int64(bitPattern: $0) }
            } else {
                seqs = try db.rows(
                    "SELECT seq FROM entries WHERE logId = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT 4096",
                    [.blob(logId), .integer(after), .integer(Int64(bitPattern: head.seq))]
                ).map { try $0.integer("seq") }
            }
            guard let last = seqs.last else { break }
            let tiles = try treeTiles(db, logId: logId)
            let leaves = try seqs.map { seq in
                if let bytes = known[UInt64(bitPattern: seq)] { return MerkleHash.leaf(bytes) }
                guard
                    let bytes = try db.blob(
                        "SELECT bytes FROM entries WHERE logId = ? AND seq = ?",
                        [.blob(logId), .integer(seq)]
                    )
                else {
                    throw CollectorError(.corruptState, "entry \(seq) of log \(Hex.encode(logId)) vanished")
                }
                return MerkleHash.leaf(bytes)
            }
            try recordBundles(db, logId: logId, leaves: seqs, from: state.size)
            try db.insert(
                into: "tree_tiles",
                columns: ["logId", "level", "idx", "hashes"],
                rows: try tiles.append(leafHashes: leaves, toSize: state.size).map { tile in
                    [.blob(logId), .integer(Int64(tile.level)), .unsigned(tile.index), .blob(tile.hashes)]
                },
                suffix: "ON CONFLICT (logId, level, idx) DO UPDATE SET hashes = excluded.hashes"
            )
            state.size += UInt64(seqs.count)
            after = last
            if seqs.count < 4096 { break }
        }
        state.coveredSeq = head.seq
        try db.execute(
            """
            INSERT INTO trees (logId, size, coveredSeq) VALUES (?, ?, ?)
            ON CONFLICT (logId) DO UPDATE SET size = excluded.size, coveredSeq = excluded.coveredSeq
            """,
            [.blob(logId), .unsigned(state.size), .unsigned(head.seq)]
        )
        return state
    }

    /// A log's tree: its size and root (the empty tree's root while it has no leaf).
    public func treeHead(logId: [UInt8]) async throws -> (size: UInt64, root: [UInt8]) {
        try await database.read { db in
            let size = try Self.treeState(db, logId: logId).size
            let tiles = try Self.treeTiles(db, logId: logId)
            return (size, try tiles.nodes().root(size: size))
        }
    }

    /// The inclusion proof of leaf `index` in the log's tree at `size` leaves.
    /// - Throws: `MerkleNodes.OutOfRange` unless `index < size <= ` the tree's size.
    public func inclusionProof(logId: [UInt8], index: UInt64, size: UInt64) async throws -> [[UInt8]] {
        try await database.read { db in
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
        try await database.read { db in
            guard 0 < first, first < second, second <= (try Self.treeState(db, logId: logId)).size else {
                throw MerkleNodes.OutOfRange(description: "no consistency proof from \(first) to \(second) in this log")
            }
            let tiles = try Self.treeTiles(db, logId: logId)
            return try tiles.nodes().consistencyProof(first: first, second: second)
        }
    }
}

/// The tiles one ``MerkleTiles`` has read, within one transaction.
final class TileCache {
    struct Key: Hashable {
        var level: Int
        var index: UInt64
    }

    var tiles: [Key: [UInt8]] = [:]
}
