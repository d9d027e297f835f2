import AuditChain
import AuditWire
import Crypto
import Foundation
import GRDB

/// Row-level reads and writes of the collector database, used inside one transaction.
extension CollectorStore {
    static func keys(_ db: Database, logId: [UInt8]) throws -> [KeyID: KeyGrant] {
        var keys: [KeyID: KeyGrant] = [:]
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT keyId, publicKey, fromSeq, untilSeq FROM keys WHERE logId = ?",
            arguments: [Data(logId)]
        )
        for row in rows {
            guard let id = KeyID(bytes: Array(row["keyId"] as Data)),
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: row["publicKey"] as Data)
            else { throw CollectorError(.corruptState, "the keys table holds an invalid key") }
            let until: Int64? = row["untilSeq"]
            keys[id] = KeyGrant(
                publicKey: key,
                fromSeq: try row.unsigned("fromSeq"),
                untilSeq: until.map { UInt64(clamping: $0) }
            )
        }
        return keys
    }

    /// Held entries at the given seqs and their neighbours (one range query when the seqs are dense).
    static func held(_ db: Database, logId: [UInt8], around seqs: [UInt64]) throws -> [UInt64: HeldEntry] {
        guard let low = seqs.min(), let high = seqs.max() else { return [:] }
        let from = low == 0 ? 0 : low - 1
        let through = high == UInt64.max ? high : high + 1
        var held: [UInt64: HeldEntry] = [:]
        let columns = "seq, kind, entryHash, prevHash, bytes"
        if through - from <= UInt64(seqs.count) * 2 + 8 {
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT \(columns) FROM entries WHERE logId = ? AND seq BETWEEN ? AND ?",
                arguments: [Data(logId), Int64(from), Int64(through)]
            )
            while let row = try rows.next() { held[try row.unsigned("seq")] = try Self.heldEntry(row) }
            return held
        }
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM entries WHERE logId = ? AND seq = ?")
        var wanted = Set<UInt64>()
        for seq in seqs {
            wanted.insert(seq)
            if seq > 0 { wanted.insert(seq - 1) }
            if seq < UInt64.max { wanted.insert(seq + 1) }
        }
        for seq in wanted {
            if let row = try Row.fetchOne(statement, arguments: [Data(logId), Int64(seq)]) {
                held[seq] = try Self.heldEntry(row)
            }
        }
        return held
    }

    static func heldEntry(_ row: Row) throws -> HeldEntry {
        HeldEntry(
            seq: try row.unsigned("seq"),
            entryHash: Array(row["entryHash"] as Data),
            prevHash: Array(row["prevHash"] as Data),
            bytes: Array(row["bytes"] as Data),
            kind: RecordKind(rawValue: UInt8(row["kind"] as Int64)) ?? .event
        )
    }

    /// Stores what the plan accepted and learned, and its incidents up to `maxIncidents` per log.
    /// - Returns: how many incidents were not kept because of that bound.
    static func apply(
        _ plan: IngestPlan,
        _ db: Database,
        logId: [UInt8],
        receivedAt: AuditTimestamp,
        maxIncidents: Int
    ) throws -> Int {
        let log = Data(logId)
        let time = receivedAt.millisecondsSinceEpoch
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO entries (logId, seq, kind, entryHash, prevHash, bytes, receivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        )
        for entry in plan.accepted {
            try insert.execute(arguments: [
                log, Int64(entry.seq), Int64(entry.kind.rawValue), Data(entry.entryHash), Data(entry.prevHash),
                Data(entry.bytes), time,
            ])
        }
        let notKept = try keep(plan.incidents, db, logId: logId, receivedAt: receivedAt, limit: maxIncidents)
        for (id, grant) in plan.keyGrants {
            try db.execute(
                sql: "INSERT OR REPLACE INTO keys (logId, keyId, publicKey, fromSeq, untilSeq) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    log, Data(id.bytes), grant.publicKey.rawRepresentation, Int64(grant.fromSeq),
                    grant.untilSeq.map { Int64($0) },
                ]
            )
        }
        for span in plan.removals {
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO removals (logId, recordSeq, firstSeq, lastSeq, count, lastRemovedHash)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    log, Int64(span.recordSeq), Int64(span.firstSeq), Int64(span.lastSeq), Int64(span.count),
                    Data(span.lastRemovedHash),
                ]
            )
        }
        return notKept
    }

    static func head(_ db: Database, logId: [UInt8]) throws -> CollectorHead? {
        guard
            let row = try Row.fetchOne(db, sql: "SELECT seq, hash FROM heads WHERE logId = ?", arguments: [Data(logId)])
        else { return nil }
        return CollectorHead(seq: try row.unsigned("seq"), hash: Array(row["hash"] as Data))
    }

    /// Decides the batch's device checkpoint against the stored keys and entries; keeps it when accepted and
    /// higher than the one kept, records an incident when it contradicts a held entry.
    static func record(
        _ checkpoint: SignedCheckpoint,
        _ db: Database,
        logId: [UInt8],
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        at receivedAt: AuditTimestamp,
        maxIncidents: Int
    ) throws -> (verdict: CheckpointVerdict, incidentsNotKept: Int) {
        let held = try Data.fetchOne(
            db,
            sql: "SELECT entryHash FROM entries WHERE logId = ? AND seq = ?",
            arguments: [Data(logId), Int64(clamping: checkpoint.seq)]
        )
        let verdict = CheckpointCheck.decide(
            checkpoint,
            logId: logId,
            keys: try keys(db, logId: logId),
            trusted: trusted,
            heldHash: held.map { Array($0) }
        )
        let bytes = Data(checkpoint.json.canonicalBytes)
        switch verdict {
        case .accepted:
            try db.execute(
                sql: """
                    INSERT INTO checkpoints (logId, seq, entryHash, checkpoint, receivedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(logId) DO UPDATE SET seq = excluded.seq, entryHash = excluded.entryHash,
                        checkpoint = excluded.checkpoint, receivedAt = excluded.receivedAt
                    WHERE excluded.seq > checkpoints.seq
                    """,
                arguments: [
                    Data(logId), Int64(clamping: checkpoint.seq), Data(checkpoint.entryHash), bytes,
                    receivedAt.millisecondsSinceEpoch,
                ]
            )
        case .conflict:
            let incident = CollectorIncident(
                kind: .checkpointConflict,
                seq: checkpoint.seq,
                entryHash: checkpoint.entryHash,
                bytes: Array(bytes),
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
    static func advanceHead(
        _ db: Database,
        logId: [UInt8],
        known: [UInt64: [UInt8]] = [:]
    ) throws -> CollectorHead? {
        let old = try head(db, logId: logId)
        var chain = StoreChain(db: db, logId: logId)
        let new = try HeadAdvancer.advance(old, in: &chain)
        if let new, new != old {
            try db.execute(
                sql: "INSERT OR REPLACE INTO heads (logId, seq, hash) VALUES (?, ?, ?)",
                arguments: [Data(logId), Int64(new.seq), Data(new.hash)]
            )
        }
        // The tree grows with the head, in the same transaction; a log from before the tree gets its whole tree here.
        if let new { try growTree(db, logId: logId, head: new, known: known) }
        return new
    }

    static func replay(_ db: Database, _ batch: BatchKey) throws -> [SyncEntryResult]? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: "SELECT logId, digest, results, retryable FROM batches WHERE batchId = ?",
                arguments: [batch.batchId]
            ),
            Array(row["logId"] as Data) == batch.logId, Array(row["digest"] as Data) == batch.digest,
            (row["retryable"] as Int64) == 0,
            let json = try? JSONValue(parsing: Array(row["results"] as Data)),
            let response = try? SyncResponse(json: json)
        else { return nil }
        return response.results
    }

    static func remember(
        _ db: Database,
        _ batch: BatchKey,
        results: [SyncEntryResult],
        receivedAt: AuditTimestamp
    ) throws {
        let encoded = SyncResponse(results: results, receipt: nil).json.canonicalBytes
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO batches (batchId, logId, digest, results, retryable, receivedAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                batch.batchId, Data(batch.logId), Data(batch.digest), Data(encoded),
                results.contains(where: \.isRetryable) ? 1 : 0, receivedAt.millisecondsSinceEpoch,
            ]
        )
        try db.execute(
            sql: "DELETE FROM batches WHERE rowid <= (SELECT MAX(rowid) FROM batches) - ?",
            arguments: [batchMemory]
        )
    }
}

/// The held entries of one log as the head advancement reads them, fetched in ordered chunks.
struct StoreChain: HeldChain {
    let db: Database
    let logId: [UInt8]
    private var cache: [UInt64: (entryHash: [UInt8], prevHash: [UInt8])] = [:]
    /// Seqs for which the cache is complete: a seq inside and not cached is not held.
    private var window: ClosedRange<UInt64>?
    static let chunk = 4096

    init(db: Database, logId: [UInt8]) {
        self.db = db
        self.logId = logId
    }

    mutating func link(at seq: UInt64) throws -> (entryHash: [UInt8], prevHash: [UInt8])? {
        if let hit = cache[seq] { return hit }
        if let window, window.contains(seq) { return nil }
        cache.removeAll(keepingCapacity: true)
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT seq, entryHash, prevHash FROM entries WHERE logId = ? AND seq >= ? ORDER BY seq LIMIT ?",
            arguments: [Data(logId), Int64(seq), Self.chunk]
        )
        var last = seq
        for row in rows {
            last = try row.unsigned("seq")
            cache[last] = (Array(row["entryHash"] as Data), Array(row["prevHash"] as Data))
        }
        window = seq...(rows.count < Self.chunk ? UInt64(Int64.max) : last)
        return cache[seq]
    }

    mutating func removals(covering seq: UInt64) throws -> [RemovalSpan] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT recordSeq, firstSeq, lastSeq, count, lastRemovedHash FROM removals
                WHERE logId = ? AND firstSeq <= ? AND lastSeq >= ?
                """,
            arguments: [Data(logId), Int64(seq), Int64(seq)]
        ).map { row in
            RemovalSpan(
                recordSeq: try row.unsigned("recordSeq"),
                firstSeq: try row.unsigned("firstSeq"),
                lastSeq: try row.unsigned("lastSeq"),
                count: try row.unsigned("count"),
                lastRemovedHash: Array(row["lastRemovedHash"] as Data)
            )
        }
    }

    mutating func heldCount(in range: ClosedRange<UInt64>) throws -> UInt64 {
        let count = try Int64.fetchOne(
            db,
            sql: "SELECT COUNT(*) FROM entries WHERE logId = ? AND seq BETWEEN ? AND ?",
            arguments: [Data(logId), Int64(range.lowerBound), Int64(range.upperBound)]
        )
        return UInt64(clamping: count ?? 0)
    }
}
