import AuditChain
import Foundation
public import TransparencyLog

/// What the read API serves of a log's tree (docs/COLLECTOR-API.md section 2): tiles, entry bundles, and proofs by
/// seq, each read in one transaction with the tree's size, so that what it returns belongs to one tree.
extension CollectorStore {
    /// The inclusion proof of one entry, read at one tree size.
    public struct LeafProof: Sendable, Equatable {
        /// The entry's sequence number.
        public var seq: UInt64
        /// Its leaf index in the tree.
        public var leafIndex: UInt64
        /// The tree's size the proof is for.
        public var treeSize: UInt64
        /// The tree's root at that size.
        public var rootHash: [UInt8]
        /// RFC 6962's `PATH(leafIndex, D[treeSize])`.
        public var inclusion: [[UInt8]]
        /// The serialized entry (the leaf).
        public var entry: [UInt8]
    }

    /// The tree's current size, the entry at `seq`, its leaf index and its inclusion proof at that size.
    /// - Throws: ``TreeReadError`` when the log is unknown, the entry is not held, the tree does not reach it yet or
    ///   it is not a leaf; ``CollectorError`` when the database is inconsistent.
    public func leafProof(logId: [UInt8], seq: UInt64) async throws -> LeafProof {
        try await database.read { db in
            let log = Hex.encode(logId)
            guard let key = Int64(exactly: seq),
                let entry = try db.blob(
                    "SELECT bytes FROM entries WHERE logId = ? AND seq = ?",
                    [.blob(logId), .integer(key)]
                )
            else {
                guard try Self.holdsEntries(db, logId: logId) else {
                    throw TreeReadError(.unknownLog, "the collector holds no entry of log \(log)")
                }
                throw TreeReadError(.notHeld, "the collector does not hold the entry at seq \(seq) of log \(log)")
            }
            let state = try Self.treeState(db, logId: logId)
            guard let covered = state.coveredSeq, seq <= covered else {
                let reach = state.coveredSeq.map { "covers seqs up to \($0) (\(state.size) leaves)" } ?? "is empty"
                throw TreeReadError(
                    .notInTreeYet,
                    "the entry at seq \(seq) of log \(log) is held but not in the tree yet: the tree \(reach); it grows "
                        + "when the gap before the entry closes"
                )
            }
            if try Self.isNonleaf(db, logId: logId, seq: key) {
                throw TreeReadError(
                    .notALeaf,
                    "the entry at seq \(seq) of log \(log) is held but is not a leaf: it arrived after the tree had "
                        + "passed its seq (a removal record had bridged it)"
                )
            }
            guard let index = try Self.leafIndex(db, logId: logId, seq: key), index < state.size else {
                throw CollectorError(.corruptState, "the leaf index of log \(log) has no leaf for seq \(seq)")
            }
            let width = UInt64(MerkleTiles.width)
            let tile = try Self.storedTile(db, logId: logId, level: 0, index: index / width)
            try Self.checkLeaves(tile, [entry], from: Int(index % width), logId: logId)
            let nodes = try Self.treeTiles(db, logId: logId).nodes()
            return LeafProof(
                seq: seq,
                leafIndex: index,
                treeSize: state.size,
                rootHash: try nodes.root(size: state.size),
                inclusion: try nodes.inclusionProof(index: index, size: state.size),
                entry: entry
            )
        }
    }

    /// The consistency proof from `first` to `second` leaves (`second` nil: the tree's current size), and the size
    /// it ends at. Equal sizes give an empty proof.
    /// - Throws: ``TreeReadError`` for an unknown log, a size beyond the tree, or `first` 0 or above `second`.
    public func consistency(
        logId: [UInt8],
        from first: UInt64,
        to second: UInt64?
    ) async throws -> (to: UInt64, proof: [[UInt8]]) {
        try await database.read { db in
            let state = try Self.treeState(db, logId: logId)
            let log = Hex.encode(logId)
            if state.size == 0, try !Self.holdsEntries(db, logId: logId) {
                throw TreeReadError(.unknownLog, "the collector holds no entry of log \(log)")
            }
            let second = second ?? state.size
            guard second <= state.size else {
                throw TreeReadError(
                    .beyondTree,
                    "the tree of log \(log) has \(state.size) leaves, fewer than the \(second) asked for"
                )
            }
            guard first > 0, first <= second else {
                throw TreeReadError(
                    .invalidRange,
                    "a consistency proof needs 1 <= from <= to; from is \(first), to is \(second) (the tree's size "
                        + "when to is not given)"
                )
            }
            guard first < second else { return (second, []) }
            return (second, try Self.treeTiles(db, logId: logId).nodes().consistencyProof(first: first, second: second))
        }
    }

    /// The tile of hashes `path` names (its first `path.width` hashes), from the stored tile, which may since have
    /// grown: a tile's hashes never change once written, so a partial tile is a prefix of every later one.
    /// - Throws: ``TreeReadError`` (``TreeReadError/Code/beyondTree``) unless the tree has that many hashes there.
    public func tile(logId: [UInt8], _ path: TilePath) async throws -> [UInt8] {
        guard case .hashes(let level) = path.kind else {
            throw TreeReadError(.beyondTree, "\(path) is an entry bundle, not a tile of hashes")
        }
        return try await database.read { db in
            let size = try Self.treeState(db, logId: logId).size
            try Self.checkWidth(path, level: level, size: size, logId: logId)
            let stored = try Self.storedTile(db, logId: logId, level: level, index: path.index)
            let bytes = path.width * MerkleHash.size
            guard stored.count >= bytes else {
                throw CollectorError(
                    .corruptState,
                    "tile \(level)/\(path.index) of log \(Hex.encode(logId)) holds fewer hashes than its tree gives"
                )
            }
            return Array(stored.prefix(bytes))
        }
    }

    /// The leaves of the entry bundle `path` names (seq and serialized entry, in leaf order), each checked against
    /// the leaf hashes of the level 0 tile of the same index.
    /// - Throws: ``TreeReadError`` (``TreeReadError/Code/beyondTree``) unless the tree has that many leaves there.
    public func bundle(logId: [UInt8], _ path: TilePath) async throws -> [(seq: UInt64, bytes: [UInt8])] {
        guard path.kind == .entries else {
            throw TreeReadError(.beyondTree, "\(path) is a tile of hashes, not an entry bundle")
        }
        return try await database.read { db in
            let state = try Self.treeState(db, logId: logId)
            try Self.checkWidth(path, level: 0, size: state.size, logId: logId)
            guard let covered = state.coveredSeq else {
                throw CollectorError(.corruptState, "the tree of log \(Hex.encode(logId)) has leaves but no seq")
            }
            let leaves = try Self.leaves(
                db,
                logId: logId,
                bundle: path.index,
                count: path.width,
                coveredSeq: covered
            )
            let tile = try Self.storedTile(db, logId: logId, level: 0, index: path.index)
            try Self.checkLeaves(tile, leaves.map(\.bytes), from: 0, logId: logId)
            return leaves
        }
    }

    /// The leaf index of the entry at `seq` in the log's tree.
    /// - Throws: ``TreeReadError`` as ``leafProof(logId:seq:)``.
    public func leafIndex(logId: [UInt8], seq: UInt64) async throws -> UInt64 {
        try await leafProof(logId: logId, seq: seq).leafIndex
    }

    /// Refuses a tile or bundle the tree of `size` leaves does not have at the asked width.
    static func checkWidth(_ path: TilePath, level: Int, size: UInt64, logId: [UInt8]) throws {
        let available = MerkleTiles.tileWidth(level: level, index: path.index, size: size)
        guard available >= path.width else {
            let what =
                available == 0
                ? "nothing at \(path)" : "only \(available) hashes at \(path), not \(path.width)"
            throw TreeReadError(.beyondTree, "the tree of log \(Hex.encode(logId)) (\(size) leaves) has \(what)")
        }
    }

    static func storedTile(_ db: any SQLSession, logId: [UInt8], level: Int, index: UInt64) throws -> [UInt8] {
        try db.blob(
            "SELECT hashes FROM tree_tiles WHERE logId = ? AND level = ? AND idx = ?",
            [.blob(logId), .integer(Int64(level)), .unsigned(index)]
        ) ?? []
    }

    /// Checks that `entries` hash to the leaf hashes of a level 0 `tile` from position `first` on: the leaf index
    /// and the tree agree, or nothing is served.
    static func checkLeaves(_ tile: [UInt8], _ entries: [[UInt8]], from first: Int, logId: [UInt8]) throws {
        for (offset, entry) in entries.enumerated() {
            let start = (first + offset) * MerkleHash.size
            guard tile.count >= start + MerkleHash.size,
                tile[start..<start + MerkleHash.size].elementsEqual(MerkleHash.leaf(entry))
            else {
                throw CollectorError(
                    .corruptState,
                    "the leaf index of log \(Hex.encode(logId)) disagrees with its tree at leaf position \(first + offset)"
                )
            }
        }
    }

    static func holdsEntries(_ db: any SQLSession, logId: [UInt8]) throws -> Bool {
        try db.exists("SELECT 1 FROM entries WHERE logId = ? LIMIT 1", [.blob(logId)])
    }

    static func isNonleaf(_ db: any SQLSession, logId: [UInt8], seq: Int64) throws -> Bool {
        try db.exists("SELECT 1 FROM tree_nonleaves WHERE logId = ? AND seq = ?", [.blob(logId), .integer(seq)])
    }
}
