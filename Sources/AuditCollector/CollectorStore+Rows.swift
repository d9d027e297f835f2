import AuditChain
import AuditWire
import Crypto
import Foundation

/// Row-level reads and writes of the collector database, used inside one transaction.
extension CollectorStore {
    static func keys(_ db: any SQLSession, logId: [UInt8]) throws -> [KeyID: KeyGrant] {
        var keys: [KeyID: KeyGrant] = [:]
        let rows = try db.rows(
            "SELECT keyId, publicKey, fromSeq, untilSeq FROM keys WHERE logId = ?",
            [.blob(logId)]
        )
        for row in rows {
            guard let id = KeyID(bytes: try row.blob("keyId")),
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: try row.blob("publicKey"))
            else { throw CollectorError(.corruptState, "the keys table holds an invalid key") }
            let until = try row.optionalInteger("untilSeq")
            keys[id] = KeyGrant(
                publicKey: key,
                fromSeq: try row.unsigned("fromSeq"),
                untilSeq: until.map { UInt64(clamping: $0) }
            )
        }
        return keys
    }

    /// Held entries at the given seqs and their neighbours (one range query when the seqs are dense).
    static func held(_ db: any SQLSession, logId: [UInt8], around seqs: [UInt64]) throws -> [UInt64: HeldEntry] {
        guard let low = seqs.min(), let high = seqs.max() else { return [:] }
        let from = low == 0 ? 0 : low - 1
        let through = high == UInt64.max ? high : high + 1
        var held: [UInt64: HeldEntry] = [:]
        let columns = "seq, kind, entryHash, prevHash, bytes"
        if through - from <= UInt64(seqs.count) * 2 + 8 {
            let rows = try db.rows(
                "SELECT \(columns) FROM entries WHERE logId = ? AND seq BETWEEN ? AND ?",
                [.blob(logId), .integer(Int64(from)), .integer(Int64(through))]
            )
            for row in rows { held[try row.unsigned("seq")] = try Self.heldEntry(row) }
            return held
        }
        var wanted = Set<UInt64>()
        for seq in seqs {
            wanted.insert(seq)
            if seq > 0 { wanted.insert(seq - 1) }
            if seq < UInt64.max { wanted.insert(seq + 1) }
        }
        for seq in wanted {
            if let row = try db.row(
                "SELECT \(columns) FROM entries WHERE logId = ? AND seq = ?",
                [.blob(logId), .integer(Int64(seq))]
            ) {
                held[seq] = try Self.heldEntry(row)
            }
        }
        return held
    }

    static func heldEntry(_ row: SQLRow) throws -> HeldEntry {
        HeldEntry(
            seq: try row.unsigned("seq"),
            entryHash: try row.blob("entryHash"),
            prevHash: try row.blob("prevHash"),
            bytes: try row.blob("bytes"),
            kind: UInt8(exactly: try row.integer("kind")).flatMap(RecordKind.init(rawValue:)) ?? .event
        )
    }

    /// Stores what the plan accepted and learned, and its incidents up to `maxIncidents` per log.
    /// - Returns: how many incidents were not kept because of that bound.
    static func apply(
        _ plan: IngestPlan,
        _ db: any SQLSession,
        logId: [UInt8],
        receivedAt: AuditTimestamp,
        maxIncidents: Int
    ) throws -> Int {
        let log = SQLValue.blob(logId)
        let time = SQLValue.integer(receivedAt.millisecondsSinceEpoch)
        try db.insert(
            into: "entries",
            columns: ["logId", "seq", "kind", "entryHash", "prevHash", "bytes", "receivedAt"],
            rows: plan.accepted.map { entry in
                [
                    log, .integer(Int64(entry.seq)), .integer(Int64(entry.kind.rawValue)), .blob(entry.entryHash),
                    .blob(entry.prevHash), .blob(entry.bytes), time,
                ]
            },
            suffix: ""
        )
        let notKept = try keep(plan.incidents, db, logId: logId, receivedAt: receivedAt, limit: maxIncidents)
        for (id, grant) in plan.keyGrants {
            try db.execute(
                """
                INSERT INTO keys (logId, keyId, publicKey, fromSeq, untilSeq) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (logId, keyId) DO UPDATE SET publicKey = excluded.publicKey, fromSeq = excluded.fromSeq,
                    untilSeq = excluded.untilSeq
                """,
                [
                    log, .blob(id.bytes), .blob(Array(grant.publicKey.rawRepresentation)),
                    .integer(Int64(grant.fromSeq)), grant.untilSeq.map { .integer(Int64($0)) } ?? .null,
                ]
            )
        }
        for span in plan.removals {
            try db.execute(
                """
                INSERT INTO removals (logId, recordSeq, firstSeq, lastSeq, count, lastRemovedHash)
                VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
                [
                    log, .integer(Int64(span.recordSeq)), .integer(Int64(span.firstSeq)),
                    .integer(Int64(span.lastSeq)), .integer(Int64(span.count)), .blob(span.lastRemovedHash),
                ]
            )
        }
        return notKept
    }

    static func head(_ db: any SQLSession, logId: [UInt8]) throws -> CollectorHead? {
        guard let row = try db.row("SELECT seq, hash FROM heads WHERE logId = ?", [.blob(logId)]) else { return nil }
        return CollectorHead(seq: try row.unsigned("seq"), hash: try row.blob("hash"))
    }

    /// Decides the batch's device checkpoint against the stored keys and entries; keeps it when accepted and
    /// higher than the one kept, records an incident when it contradicts a held entry.
    static func record(
        _ checkpoint: SignedCheckpoint,
        _ db: any SQLSession,
        logId: [UInt8],
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        at receivedAt: AuditTimestamp,
        maxIncidents: Int
    ) throws -> (verdict: CheckpointVerdict, incidentsNotKept: Int) {
        let held = try db.blob(
            "SELECT entryHash FROM entries WHERE logId = ? AND seq = ?",
            [.blob(logId), .integer(Int64(clamping: checkpoint.seq))]
        )
        let verdict = CheckpointCheck.decide(
            checkpoint,
            logId: logId,
            keys: try keys(db, logId: logId),
            trusted: trusted,
            heldHash: held
        )
        let bytes = checkpoint.json.canonicalBytes
        switch verdict {
        case .accepted:
            try db.execute(
                """
                INSERT INTO checkpoints (logId, seq, entryHash, checkpoint, receivedAt) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (logId) DO UPDATE SET seq = excluded.seq, entryHash = excluded.entryHash,
                    checkpoint = excluded.checkpoint, receivedAt = excluded.receivedAt
                WHERE excluded.seq > checkpoints.seq
                """,
                [
                    .blob(logId), .integer(Int64(clamping: checkpoint.seq)), .blob(checkpoint.entryHash), .blob(bytes),
                    .integer(receivedAt.millisecondsSinceEpoch),
                ]
            )
        case .conflict:
            let incident = CollectorIncident(
                kind: .checkpointConflict,
                seq: checkpoint.seq,
                entryHash: checkpoint.entryHash,
                bytes: bytes,
                reason: "a checkpoint signed by the device names another entry than the one held"
            )
            let notKept = try keep([incident], db, logId: logId, receivedAt: receivedAt, limit: maxIncidents)
            return (verdict, notKept)
        case .refused:
            break
        }
        return (verdict, 0)
    }

    /// Re-advances the stored head (after every batch: a removal record often bridges a gap left earlier).
    /// - Parameters:
    ///   - known: the entries the batch stored, by seq (``growTree(_:logId:head:known:state:)``).
    ///   - tree: the tree's state as read in this transaction, if the caller has it.
    static func advanceHead(
        _ db: any SQLSession,
        logId: [UInt8],
        known: [UInt64: [UInt8]] = [:],
        tree: TreeState? = nil
    ) throws -> CollectorHead? {
        try advanceHeadAndTree(db, logId: logId, known: known, tree: tree).head
    }

    /// ``advanceHead(_:logId:known:tree:)``, also giving the tree's state after it grew (nil without a head).
    static func advanceHeadAndTree(
        _ db: any SQLSession,
        logId: [UInt8],
        known: [UInt64: [UInt8]] = [:],
        tree: TreeState? = nil
    ) throws -> (head: CollectorHead?, tree: TreeState?) {
        let old = try head(db, logId: logId)
        var chain = StoreChain(db: db, logId: logId)
        let new = try HeadAdvancer.advance(old, in: &chain)
        if let new, new != old {
            try db.execute(
                """
                INSERT INTO heads (logId, seq, hash) VALUES (?, ?, ?)
                ON CONFLICT (logId) DO UPDATE SET seq = excluded.seq, hash = excluded.hash
                """,
                [.blob(logId), .integer(Int64(new.seq)), .blob(new.hash)]
            )
        }
        // The tree grows with the head, in the same transaction; a log from before the tree gets its whole tree here.
        guard let new else { return (nil, nil) }
        return (new, try growTree(db, logId: logId, head: new, known: known, state: tree))
    }

    /// The stored results of the batch with this id and content, unless some were refused as retryable; nil
    /// otherwise. `remembered` tells whether a batch with its id is remembered at all.
    static func replay(
        _ db: any SQLSession,
        _ batch: BatchKey,
        remembered: inout Bool
    ) throws -> [SyncEntryResult]? {
        let row = try db.row(
            "SELECT logId, digest, results, retryable FROM batches WHERE batchId = ?",
            [.text(batch.batchId)]
        )
        remembered = row != nil
        guard let row,
            try row.blob("logId") == batch.logId, try row.blob("digest") == batch.digest,
            try row.integer("retryable") == 0,
            let json = try? JSONValue(parsing: try row.blob("results")),
            let response = try? SyncResponse(json: json)
        else { return nil }
        return response.results
    }

    /// Remembers the batch's results for replay; `replacing`: a batch with its id is remembered already.
    static func remember(
        _ db: any SQLSession,
        _ batch: BatchKey,
        results: [SyncEntryResult],
        receivedAt: AuditTimestamp,
        replacing: Bool = true
    ) throws {
        let encoded = SyncResponse(results: results, receipt: nil).json.canonicalBytes
        // Deleted and inserted again (not updated), so that a batch sent again is the newest one remembered.
        if replacing { try db.execute("DELETE FROM batches WHERE batchId = ?", [.text(batch.batchId)]) }
        try db.execute(
            "INSERT INTO batches (batchId, logId, digest, results, retryable, receivedAt) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(batch.batchId), .blob(batch.logId), .blob(batch.digest), .blob(encoded),
                .integer(results.contains(where: \.isRetryable) ? 1 : 0), .integer(receivedAt.millisecondsSinceEpoch),
            ]
        )
    }

    /// Forgets all but the ``batchMemory`` newest batch results (once per group transaction).
    static func pruneBatches(_ db: any SQLSession) throws {
        switch db.dialect {
        case .sqlite:
            try db.execute(
                "DELETE FROM batches WHERE rowid <= (SELECT MAX(rowid) FROM batches) - ?",
                [.integer(Int64(batchMemory))]
            )
        case .postgres:
            // Replicas writing other logs prune at the same time: each skips the rows another is deleting.
            try db.execute(
                """
                DELETE FROM batches WHERE id IN (
                    SELECT id FROM batches WHERE id <= (SELECT MAX(id) FROM batches) - ? FOR UPDATE SKIP LOCKED
                )
                """,
                [.integer(Int64(batchMemory))]
            )
        }
    }
}

/// The held entries of one log as the head advancement reads them, fetched in ordered chunks.
struct StoreChain: HeldChain {
    let db: any SQLSession
    let logId: [UInt8]
    private var cache: [UInt64: (entryHash: [UInt8], prevHash: [UInt8])] = [:]
    /// Seqs for which the cache is complete: a seq inside and not cached is not held.
    private var window: ClosedRange<UInt64>?
    static let chunk = 4096

    init(db: any SQLSession, logId: [UInt8]) {
        self.db = db
        self.logId = logId
    }

    mutating func link(at seq: UInt64) throws -> (entryHash: [UInt8], prevHash: [UInt8])? {
        if let hit = cache[seq] { return hit }
        if let window, window.contains(seq) { return nil }
        cache.removeAll(keepingCapacity: true)
        let rows = try db.rows(
            "SELECT seq, entryHash, prevHash FROM entries WHERE logId = ? AND seq >= ? ORDER BY seq LIMIT ?",
            [.blob(logId), .integer(Int64(seq)), .integer(Int64(Self.chunk))]
        )
        var last = seq
        for row in rows {
            last = try row.unsigned("seq")
            cache[last] = (try row.blob("entryHash"), try row.blob("prevHash"))
        }
        window = seq...(rows.count < Self.chunk ? UInt64(Int64.max) : last)
        return cache[seq]
    }

    mutating func nextHeld(after seq: UInt64) throws -> UInt64? {
        // Inside the window the cache holds every held entry: the next one is there, or past the window.
        if let window, window.contains(seq), seq < window.upperBound {
            if let next = cache.keys.filter({ $0 > seq }).min() { return next }
            if window.upperBound == UInt64(Int64.max) { return nil }
        }
        let next = try db.integer(
            "SELECT MIN(seq) FROM entries WHERE logId = ? AND seq > ?",
            [.blob(logId), .integer(Int64(clamping: seq))]
        )
        return next.map { UInt64(clamping: $0) }
    }

    mutating func removals(covering seq: UInt64) throws -> [RemovalSpan] {
        try db.rows(
            """
            SELECT recordSeq, firstSeq, lastSeq, count, lastRemovedHash FROM removals
            WHERE logId = ? AND firstSeq <= ? AND lastSeq >= ?
            """,
            [.blob(logId), .integer(Int64(seq)), .integer(Int64(seq))]
        ).map { row in
            RemovalSpan(
                recordSeq: try row.unsigned("recordSeq"),
                firstSeq: try row.unsigned("firstSeq"),
                lastSeq: try row.unsigned("lastSeq"),
                count: try row.unsigned("count"),
                lastRemovedHash: try row.blob("lastRemovedHash")
            )
        }
    }

    mutating func heldCount(in range: ClosedRange<UInt64>) throws -> UInt64 {
        let count = try db.integer(
            "SELECT COUNT(*) FROM entries WHERE logId = ? AND seq BETWEEN ? AND ?",
            [.blob(logId), .integer(Int64(range.lowerBound)), .integer(Int64(range.upperBound))]
        )
        return UInt64(clamping: count ?? 0)
    }
}
