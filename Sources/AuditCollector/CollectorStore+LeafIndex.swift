import AuditChain
import Foundation
import GRDB
import TransparencyLog

/// Which held entry is which leaf of a log's tree, kept without a write per entry (docs/TRANSPARENCY.md section 6).
///
/// The leaves are the held entries with a seq up to the tree's `coveredSeq`, in seq order, except those accepted
/// after the tree had passed their seq (inside a gap a removal record bridged), which are never leaves:
///
/// - `tree_bundles (logId, idx, firstSeq)`: the seq of leaf `256 * idx`, one row per 256 leaves (per entry bundle);
/// - `tree_nonleaves (logId, seq)`: the held entries at or below `coveredSeq` that are not leaves.
///
/// Leaf `256 * idx + k` is then the `k`-th held entry from `firstSeq` on that is not in `tree_nonleaves`.
extension CollectorStore {
    static func createLeafIndexTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS tree_bundles (
                    logId BLOB NOT NULL, idx INTEGER NOT NULL, firstSeq INTEGER NOT NULL, PRIMARY KEY (logId, idx)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX IF NOT EXISTS tree_bundles_by_seq ON tree_bundles (logId, firstSeq);
                CREATE TABLE IF NOT EXISTS tree_nonleaves (
                    logId BLOB NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (logId, seq)
                ) WITHOUT ROWID;
                """
        )
        // A tree grown before these tables (or by a collector that did not keep them) lacks bundle rows: its index
        // is rebuilt from its entries and its level 0 tiles, once, here.
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT logId, size, coveredSeq, (SELECT COUNT(*) FROM tree_bundles b WHERE b.logId = t.logId) AS bundles
                FROM trees t
                """
        )
        for row in rows {
            let state = TreeState(size: try row.unsigned("size"), coveredSeq: try row.unsigned("coveredSeq"))
            let bundles = try row.unsigned("bundles")
            if bundles != state.size / UInt64(MerkleTiles.width) + (state.size % UInt64(MerkleTiles.width) == 0 ? 0 : 1)
            {
                try rebuildLeafIndex(db, logId: Array(row["logId"] as Data), state: state)
            }
        }
    }

    /// Rebuilds a log's leaf index: walks its held entries up to `coveredSeq` beside the leaf hashes of its level 0
    /// tiles; an entry whose leaf hash is the next leaf's is that leaf, any other is not a leaf. (Two entries never
    /// share a leaf hash: their headers hold their seqs.)
    /// - Throws: ``CollectorError`` (``CollectorError/Code/corruptState``) when the entries do not give every leaf.
    static func rebuildLeafIndex(_ db: Database, logId: [UInt8], state: TreeState) throws {
        let log = Data(logId)
        try db.execute(sql: "DELETE FROM tree_bundles WHERE logId = ?", arguments: [log])
        try db.execute(sql: "DELETE FROM tree_nonleaves WHERE logId = ?", arguments: [log])
        guard let covered = state.coveredSeq, let last = Int64(exactly: covered) else { return }
        let read = try db.cachedStatement(
            sql: "SELECT hashes FROM tree_tiles WHERE logId = ? AND level = 0 AND idx = ?"
        )
        let bundle = try db.cachedStatement(sql: "INSERT INTO tree_bundles (logId, idx, firstSeq) VALUES (?, ?, ?)")
        let nonleaf = try db.cachedStatement(sql: "INSERT INTO tree_nonleaves (logId, seq) VALUES (?, ?)")
        let width = UInt64(MerkleTiles.width)
        var leaf: UInt64 = 0
        var tile: (index: UInt64, hashes: [UInt8])?
        let entries = try Row.fetchCursor(
            db,
            sql: "SELECT seq, bytes FROM entries WHERE logId = ? AND seq <= ? ORDER BY seq",
            arguments: [log, last]
        )
        while let row = try entries.next() {
            let seq = row["seq"] as Int64
            if leaf < state.size {
                if tile?.index != leaf / width {
                    let hashes = try Data.fetchOne(read, arguments: [log, Int64(leaf / width)]).map { Array($0) } ?? []
                    tile = (leaf / width, hashes)
                }
                let offset = Int(leaf % width) * MerkleHash.size
                if let hashes = tile?.hashes, hashes.count >= offset + MerkleHash.size,
                    hashes[offset..<offset + MerkleHash.size].elementsEqual(MerkleHash.leaf(row["bytes"] as Data))
                {
                    if leaf % width == 0 { try bundle.execute(arguments: [log, Int64(leaf / width), seq]) }
                    leaf += 1
                    continue
                }
            }
            try nonleaf.execute(arguments: [log, seq])
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
    static func recordNonleaves(_ db: Database, logId: [UInt8], accepted seqs: [UInt64]) throws {
        guard let covered = try treeState(db, logId: logId).coveredSeq else { return }
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO tree_nonleaves (logId, seq) VALUES (?, ?)")
        for seq in seqs where seq <= covered {
            try insert.execute(arguments: [Data(logId), Int64(bitPattern: seq)])
        }
    }

    /// Records which seq starts each entry bundle among `seqs`, the leaves appended at `size` (one row per 256).
    static func recordBundles(_ db: Database, logId: [UInt8], leaves seqs: [Int64], from size: UInt64) throws {
        let width = UInt64(MerkleTiles.width)
        var offset = (width - size % width) % width
        guard offset < UInt64(seqs.count) else { return }
        let insert = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO tree_bundles (logId, idx, firstSeq) VALUES (?, ?, ?)"
        )
        while offset < UInt64(seqs.count) {
            let index = (size + offset) / width
            try insert.execute(arguments: [Data(logId), Int64(bitPattern: index), seqs[Int(offset)]])
            offset += width
        }
    }

    /// The leaf index of the held entry at `seq`, which must be at most the tree's `coveredSeq` and not recorded as
    /// a non-leaf; nil when no bundle starts at or below it.
    static func leafIndex(_ db: Database, logId: [UInt8], seq: Int64) throws -> UInt64? {
        let log = Data(logId)
        guard
            let bundle = try Row.fetchOne(
                db,
                sql: """
                    SELECT idx, firstSeq FROM tree_bundles WHERE logId = ? AND firstSeq <= ?
                    ORDER BY firstSeq DESC LIMIT 1
                    """,
                arguments: [log, seq]
            )
        else { return nil }
        let first = bundle["firstSeq"] as Int64
        let held = try Int64.fetchOne(
            db,
            sql: "SELECT COUNT(*) FROM entries WHERE logId = ? AND seq >= ? AND seq < ?",
            arguments: [log, first, seq]
        )
        let skipped = try Int64.fetchOne(
            db,
            sql: "SELECT COUNT(*) FROM tree_nonleaves WHERE logId = ? AND seq >= ? AND seq < ?",
            arguments: [log, first, seq]
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
        _ db: Database,
        logId: [UInt8],
        bundle index: UInt64,
        count: Int,
        coveredSeq: UInt64
    ) throws -> [(seq: UInt64, bytes: [UInt8])] {
        let log = Data(logId)
        let problem = CollectorError(
            .corruptState,
            "the leaf index of log \(Hex.encode(logId)) does not give the \(count) leaves of bundle \(index)"
        )
        guard
            let first = try Int64.fetchOne(
                db,
                sql: "SELECT firstSeq FROM tree_bundles WHERE logId = ? AND idx = ?",
                arguments: [log, Int64(bitPattern: index)]
            )
        else { throw problem }
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT seq, bytes FROM entries WHERE logId = ?1 AND seq >= ?2 AND seq <= ?3
                AND seq NOT IN (SELECT seq FROM tree_nonleaves WHERE logId = ?1 AND seq >= ?2 AND seq <= ?3)
                ORDER BY seq LIMIT ?4
                """,
            arguments: [log, first, Int64(bitPattern: coveredSeq), count]
        )
        guard rows.count == count else { throw problem }
        return try rows.map { (try $0.unsigned("seq"), Array($0["bytes"] as Data)) }
    }
}
