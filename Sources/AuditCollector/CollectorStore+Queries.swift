import AuditChain
import Foundation
import GRDB

/// What the collector holds, for the head endpoint, tests and benchmarks.
extension CollectorStore {
    /// Every entry held for a log, in seq order.
    public func entries(logId: [UInt8]) async throws -> [HeldEntry] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT seq, kind, entryHash, prevHash, bytes FROM entries WHERE logId = ? ORDER BY seq",
                arguments: [Data(logId)]
            ).map(Self.heldEntry)
        }
    }

    /// Number of entries held for a log.
    public func count(logId: [UInt8]) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entries WHERE logId = ?", arguments: [Data(logId)]) ?? 0
        }
    }

    /// Forks refused for a log (entries that differ from a held entry at the same seq), in seq order.
    public func forks(logId: [UInt8]) async throws -> [CollectorIncident] {
        try await incidents(logId: logId, kind: .fork)
    }

    /// Chain breaks refused for a log, in seq order.
    public func chainBreaks(logId: [UInt8]) async throws -> [CollectorIncident] {
        try await incidents(logId: logId, kind: .chainBreak)
    }

    /// The contiguous head of a log (nil while its genesis is not held).
    public func head(logId: [UInt8]) async throws -> CollectorHead? {
        try await pool.read { db in try Self.head(db, logId: logId) }
    }

    /// Every log the collector holds entries of.
    public func logIds() async throws -> [[UInt8]] {
        try await pool.read { db in
            try Data.fetchAll(db, sql: "SELECT DISTINCT logId FROM entries ORDER BY logId").map { Array($0) }
        }
    }

    /// The status of a log without a receipt; nil when nothing of it is held or refused.
    public func status(logId: [UInt8]) async throws -> LogStatus? {
        try await pool.read { db in
            let log = Data(logId)
            let row = try Row.fetchOne(
                db,
                sql: "SELECT COUNT(*) AS held, MAX(seq) AS highest FROM entries WHERE logId = ?",
                arguments: [log]
            )
            let held = (row?["held"] as Int64?) ?? 0
            let incidents = try Row.fetchAll(
                db,
                sql: "SELECT DISTINCT seq, kind FROM incidents WHERE logId = ? ORDER BY seq",
                arguments: [log]
            )
            guard held > 0 || !incidents.isEmpty else { return nil }
            let head = try Self.head(db, logId: logId)
            let highest = try row.flatMap { row in (row["highest"] as Int64?) == nil ? nil : try row.unsigned("highest")
            }
            func seqs(_ kind: CollectorIncident.Kind) throws -> [UInt64] {
                try incidents.filter { ($0["kind"] as String) == kind.rawValue }.map { try $0.unsigned("seq") }
            }
            var status = LogStatus(
                logId: logId,
                head: head,
                highestSeq: highest,
                held: UInt64(clamping: held),
                gaps: try Self.gaps(db, logId: logId, after: head?.seq),
                forks: try seqs(.fork),
                chainBreaks: try seqs(.chainBreak),
                receipt: nil
            )
            status.checkpointConflicts = try seqs(.checkpointConflict)
            status.incidentsNotKept = try Self.incidentsNotKept(db, logId: logId)
            if let kept = try Row.fetchOne(
                db,
                sql: "SELECT checkpoint, receivedAt FROM checkpoints WHERE logId = ?",
                arguments: [log]
            ),
                let json = try? JSONValue(parsing: Array(kept["checkpoint"] as Data)),
                let checkpoint = try? SignedCheckpoint(json: json)
            {
                status.deviceCheckpoint = LogStatus.KeptCheckpoint(
                    checkpoint: checkpoint,
                    receivedAt: AuditTimestamp(millisecondsSinceEpoch: kept["receivedAt"])
                )
            }
            return status
        }
    }

    /// Missing ranges above `after` (from 0 when there is no head) up to the highest held seq.
    static func gaps(_ db: Database, logId: [UInt8], after head: UInt64?) throws -> [LogStatus.Gap] {
        let start = head.map { Int64(clamping: $0) == .max ? Int64.max : Int64(clamping: $0) + 1 } ?? 0
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT seq, previous FROM (
                    SELECT seq, LAG(seq) OVER (ORDER BY seq) AS previous FROM entries WHERE logId = ? AND seq >= ?
                ) WHERE previous IS NULL OR seq > previous + 1
                """,
            arguments: [Data(logId), start]
        )
        var gaps: [LogStatus.Gap] = []
        while let row = try rows.next(), gaps.count < LogStatus.maxListedGaps {
            let seq = row["seq"] as Int64
            // Values written by the collector are in range; clamping keeps a tampered row from trapping.
            let from = (row["previous"] as Int64?).map { $0 == .max ? $0 : $0 + 1 } ?? start
            if seq > from {
                gaps.append(LogStatus.Gap(from: UInt64(clamping: from), to: UInt64(clamping: seq - 1)))
            }
        }
        return gaps
    }

    private func incidents(logId: [UInt8], kind: CollectorIncident.Kind) async throws -> [CollectorIncident] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, entryHash, bytes, reason FROM incidents WHERE logId = ? AND kind = ?
                    ORDER BY seq, receivedAt
                    """,
                arguments: [Data(logId), kind.rawValue]
            ).map { row in
                CollectorIncident(
                    kind: kind,
                    seq: try row.unsigned("seq"),
                    entryHash: Array(row["entryHash"] as Data),
                    bytes: Array(row["bytes"] as Data),
                    reason: row["reason"]
                )
            }
        }
    }
}
