import AuditChain
import Foundation
import TransparencyLog

/// Which held entry is which leaf of a log's tree, kept without a write per entry (docs/COLLECTOR-API.md section 1).
///
/// The leaves are the held entries with a seq up to the tree's `coveredSeq`, in seq order, except those accepted
/// after the tree had passed their seq (inside a gap a removal record bridged), which are never leaves:
///
/// - `tree_bundles (logId, idx, firstSeq)`: the seq of leaf `256 * idx`, one row per 256 leaves (per entry bundle);
/// - `tree_nonleaves (logId, seq)`: the held entries at or below `coveredSeq` that are not leaves.
///
/// Leaf `256 * idx + k` is then the `k`-th held entry from `firstSeq` on that is not in `tree_nonleaves`.
extension CollectorStore {
    /// Rebuilds the leaf index of every tree that lacks one, at open (after the migrations).
    static func rebuildMissingLeafIndexes(_ db: any SQLSession) throws {
        // A tree grown before these tables (or by a collector that did not keep them) lacks bundle rows: its index
        // is rebuilt from its entries and its level 0 tiles, once, here.
        let rows = try db.rows(
            """
            SELECT logId, size, coveredSeq, (SELECT COUNT(*) FROM tree_bundles b WHERE b.logId = t.logId) AS bundles
            FROM trees t
            """,
            []
        )
        for row in rows {
            let state = TreeState(size: try row.unsigned("size"), coveredSeq: try row.unsigned("coveredSeq"))
            let bundles = try row.unsigned("bundles")
            if bundles != state.size / UInt64(MerkleTiles.width) + (state.size % UInt64(MerkleTiles.width) == 0 ? 0 : 1)
            {
                try rebuildLeafIndex(db, logId: try row.blob("logId"), state: state)
            }
        }
    }

    /// Rebuilds a log's leaf index: walks its held entries up to `coveredSeq` beside the leaf hashes of its level 0
    /// tiles; an entry whose leaf hash is the next leaf's is that leaf, any other is not a leaf. (Two entries never
    /// share a leaf hash: their headers hold their seqs.)
    /// - Throws: ``CollectorError`` (``CollectorError/Code/corruptState``) when the entries do not give every leaf.
    static func rebuildLeafIndex(_ db: any SQLSession, logId: [UInt8], state: TreeState) throws {
        let log = SQLValue.blob(logId)
        try db.execute("DELETE FROM tree_bundles WHERE logId = ?", [log])
        try db.execute("DELETE FROM tree_nonleaves WHERE logId = ?", [log])
        guard let covered = state.coveredSeq, let last = Int64(exactly: covered) else { return }
        let width = UInt64(MerkleTiles.width)
        var leaf: UInt64 = 0
        var tile: (index: UInt64, hashes: [UInt8])?
        // In chunks of 4 096 entries, so that a long log is never read into memory at once.
        var after: Int64 = -1
        while true {
            let rows = try db.rows(
                "SELECT seq, bytes FROM entries WHERE logId = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT 4096",
                [log, .integer(after), .integer(last)]
            )
            for row in rows {
                let seq = try row.integer("seq")
                after = seq
                if leaf < state.size {
                    if tile?.index != leaf / width {
                        tile = (leaf / width, try storedTile(db, logId: logId, level: 0, index: leaf / width))
                    }
                    let offset = Int(leaf % width) * MerkleHash.size
                    if let hashes = tile?.hashes, hashes.count >= offset + MerkleHash.size,
                        hashes[offset..<offset + MerkleHash.size].elementsEqual(MerkleHash.leaf(try row.blob("bytes")))
                    {
                        if leaf % width == 0 {
                            try db.execute(
                                "INSERT INTO tree_bundles (logId, idx, firstSeq) VALUES (?, ?, ?)",
                                [log, .unsigned(leaf / width), .integer(seq)]
                            )
                        }
                        leaf += 1
                        continue
                    }
                }
                try db.execute("INSERT INTO tree_nonleaves (logId, seq) VALUES (?, ?)", [log, .integer(seq)])
            }
            if rows.count < 4096 { break }
        }
        guard leaf == state.size else {
            throw CollectorError(
                .corruptState,
                "the tree of log \(Hex.encode(logId)) has \(state.size) leaves, but only \(leaf) of its held entries "
                    + "match its level 0 tiles"
            )
        }
    }

    /// Records the accepted entries at or below the tree's `coveredSeq` as not leaves: the tree has passed them
    /// (they sat inside a gap a removal record bridged). Called in the ingest transaction, before the tree grows.
    /// - Returns: the tree's state, as read here.
    @discardableResult
    static func recordNonleaves(_ db: any SQLSession, logId: [UInt8], accepted seqs: [UInt64]) throws -> TreeState {
        let state = try treeState(db, logId: logId)
        guard let covered = state.coveredSeq else { return state }
        try db.insert(
            into: "tree_nonleaves",
            columns: ["logId", "seq"],
            rows: seqs.filter { $0 <= covered }.map { [.blob(logId), .unsigned($0)] },
            suffix: "ON CONFLICT DO NOTHING"
        )
        return state
    }

    /// Records which seq starts each entry bundle among `seqs`, the leaves appended at `size` (one row per 256).
    static func recordBundles(_ db: any SQLSession, logId: [UInt8], leaves seqs: [Int64], from size: UInt64) throws {
        let width = UInt64(MerkleTiles.width)
        var offset = (width - size % width) % width
        guard offset < UInt64(seqs.count) else { return }
        var rows: [[SQLValue]] = []
        while offset < UInt64(seqs.count) {
            rows.append([.blob(logId), .unsigned((size + offset) / width), .integer(seqs[Int(offset)])])
            offset += width
        }
        try db.insert(
            into: "tree_bundles",
            columns: ["logId", "idx", "firstSeq"],
            rows: rows,
            suffix: "ON CONFLICT (logId, idx) DO UPDATE SET firstSeq = excluded.firstSeq"
        )
    }

    /// The leaf index of the held entry at `seq`, which must be at most the tree's `coveredSeq` and not recorded as
    /// a non-leaf; nil when no bundle starts at or below it.
    static func leafIndex(_ db: any SQLSession, logId: [UInt8], seq: Int64) throws -> UInt64? {
        let log = SQLValue.blob(logId)
        guard
            let bundle = try db.row(
                """
                SELECT idx, firstSeq FROM tree_bundles WHERE logId = ? AND firstSeq <= ?
                ORDER BY firstSeq DESC LIMIT 1
                """,
                [log, .integer(seq)]
            )
        else { return nil }
        let first = SQLValue.integer(try bundle.integer("firstSeq"))
        let held = try db.integer(
            "SELECT COUNT(*) FROM entries WHERE logId = ? AND seq >= ? AND seq < ?",
            [log, first, .integer(seq)]
        )
        let skipped = try db.integer(
            "SELECT COUNT(*) FROM tree_nonleaves WHERE logId = ? AND seq >= ? AND seq < ?",
            [log, first, .integer(seq)]
        )
        let index = try bundle.unsigned("idx")
        guard let held, let skipped, held >= skipped, index <= UInt64.max / UInt64(MerkleTiles.width) else {
            throw CollectorError(.corruptState, "the leaf index of log \(Hex.encode(logId)) is inconsistent")
        }
        let (leaf, overflow) = (index * UInt64(MerkleTiles.width)).addingReportingOverflow(UInt64(held - skipped))
        guard !overflow else {
            throw CollectorError(.corruptState, "the leaf index of log \(Hex.encode(logId)) is inconsistent")
        }
        return leaf
    }

    /// The leaves `256 * index ..< 256 * index + count` (seq and serialized entry), `count` at most 256 and within
    /// the tree: the held entries from the bundle's first seq on, up to `coveredSeq`, that are leaves.
    /// - Throws: ``CollectorError`` (``CollectorError/Code/corruptState``) when fewer are found.
    static func leaves(
        _ db: any SQLSession,
        logId: [UInt8],
        bundle index: UInt64,
        count: Int,
        coveredSeq: UInt64
    ) throws -> [(seq: UInt64, bytes: [UInt8])] {
        let log = SQLValue.blob(logId)
        let problem = CollectorError(
            .corruptState,
            "the leaf index of log \(Hex.encode(logId)) does not give the \(count) leaves of bundle \(index)"
        )
        guard
            let first = try db.integer(
                "SELECT firstSeq FROM tree_bundles WHERE logId = ? AND idx = ?",
                [log, .unsigned(index)]
            )
        else { throw problem }
        let rows = try db.rows(
            """
            SELECT seq, bytes FROM entries WHERE logId = ?1 AND seq >= ?2 AND seq <= ?3
            AND seq NOT IN (SELECT seq FROM tree_nonleaves WHERE logId = ?1 AND seq >= ?2 AND seq <= ?3)
            ORDER BY seq LIMIT ?4
            """,
            [log, .integer(first), .unsigned(coveredSeq), .integer(Int64(count))]
        )
        guard rows.count == count else { throw problem }
        return try rows.map { (try $0.unsigned("seq"), try $0.blob("bytes")) }
    }
}
