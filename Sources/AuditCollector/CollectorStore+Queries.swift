import AuditChain
import Foundation

/// What the collector holds, for the head endpoint, tests and benchmarks.
extension CollectorStore {
    /// Every entry held for a log, in seq order.
    public func entries(logId: [UInt8]) async throws -> [HeldEntry] {
        try await database.read { db in
            try db.rows(
                "SELECT seq, kind, entryHash, prevHash, bytes FROM entries WHERE logId = ? ORDER BY seq",
                [.blob(logId)]
            ).map(Self.heldEntry)
        }
    }

    /// Number of entries held for a log.
    public func count(logId: [UInt8]) async throws -> Int {
        try await database.read { db in
            Int(try db.integer("SELECT COUNT(*) FROM entries WHERE logId = ?", [.blob(logId)]) ?? 0)
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
        try await database.read { db in try Self.head(db, logId: logId) }
    }

    /// Every log the collector holds entries of.
    public func logIds() async throws -> [[UInt8]] {
        try await database.read { db in
            try db.rows("SELECT DISTINCT logId FROM entries ORDER BY logId", []).map { try $0.blob("logId") }
        }
    }

    /// The status of a log without a receipt; nil when nothing of it is held or refused.
    public func status(logId: [UInt8]) async throws -> LogStatus? {
        try await database.read { db in
            let log = SQLValue.blob(logId)
            let row = try db.row("SELECT COUNT(*) AS held, MAX(seq) AS highest FROM entries WHERE logId = ?", [log])
            let held = try row?.optionalInteger("held") ?? 0
            let incidents = try db.rows("SELECT DISTINCT seq, kind FROM incidents WHERE logId = ? ORDER BY seq", [log])
            guard held > 0 || !incidents.isEmpty else { return nil }
            let head = try Self.head(db, logId: logId)
            let highest = try row.flatMap { row in
                try row.optionalInteger("highest") == nil ? nil : try row.unsigned("highest")
            }
            func seqs(_ kind: CollectorIncident.Kind) throws -> [UInt64] {
                try incidents.filter { try $0.text("kind") == kind.rawValue }.map { try $0.unsigned("seq") }
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
            status.epoch = try Self.epochStatuses(db, only: logId)[logId]
            if let kept = try db.row("SELECT checkpoint, receivedAt FROM checkpoints WHERE logId = ?", [log]),
                let json = try? JSONValue(parsing: try kept.blob("checkpoint")),
                let checkpoint = try? SignedCheckpoint(json: json)
            {
                status.deviceCheckpoint = LogStatus.KeptCheckpoint(
                    checkpoint: checkpoint,
                    receivedAt: AuditTimestamp(millisecondsSinceEpoch: try kept.integer("receivedAt"))
                )
            }
            return status
        }
    }

    /// Missing ranges above `after` (from 0 when there is no head) up to the highest held seq.
    static func gaps(_ db: any SQLSession, logId: [UInt8], after head: UInt64?) throws -> [LogStatus.Gap] {
        let start = head.map { Int64(clamping: $0) == .max ? Int64.max : Int64(clamping: $0) + 1 } ?? 0
        let rows = try db.rows(
            """
            SELECT seq, previous FROM (
                SELECT seq, LAG(seq) OVER (ORDER BY seq) AS previous FROM entries WHERE logId = ? AND seq >= ?
            ) AS runs WHERE previous IS NULL OR seq > previous + 1
            ORDER BY seq LIMIT ?
            """,
            [.blob(logId), .integer(start), .integer(Int64(LogStatus.maxListedGaps) + 1)]
        )
        var gaps: [LogStatus.Gap] = []
        for row in rows where gaps.count < LogStatus.maxListedGaps {
            let seq = try row.integer("seq")
            // Values written by the collector are in range; clamping keeps a tampered row from trapping.
            let from = try row.optionalInteger("previous").map { $0 == .max ? $0 : $0 + 1 } ?? start
            if seq > from {
                gaps.append(LogStatus.Gap(from: UInt64(clamping: from), to: UInt64(clamping: seq - 1)))
            }
        }
        return gaps
    }

    private func incidents(logId: [UInt8], kind: CollectorIncident.Kind) async throws -> [CollectorIncident] {
        try await database.read { db in
            try db.rows(
                """
                SELECT seq, entryHash, bytes, reason FROM incidents WHERE logId = ? AND kind = ?
                ORDER BY seq, receivedAt
                """,
                [.blob(logId), .text(kind.rawValue)]
            ).map { row in
                CollectorIncident(
                    kind: kind,
                    seq: try row.unsigned("seq"),
                    entryHash: try row.blob("entryHash"),
                    bytes: try row.blob("bytes"),
                    reason: try row.text("reason")
                )
            }
        }
    }
}
