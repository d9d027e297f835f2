import AuditChain
import Foundation
import GRDB

/// Incidents kept as evidence (forks, chain breaks, checkpoint conflicts), bounded per log: a token holder can send
/// any number of contradicting entries, and each incident stores the refused entry's bytes. Past the bound, new
/// incidents are counted, not kept (`incidentsNotKept` in the head endpoint, a log line per batch).
extension CollectorStore {
    /// Default bound on the incidents kept per log. The first contradictions are the evidence; a thousand of them,
    /// each holding an entry of at most a batch's size, bounds what one log can make the collector store.
    public static let defaultMaxIncidentsPerLog = 1000

    static func createIncidentTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS incidentsNotKept (logId BLOB PRIMARY KEY, count INTEGER NOT NULL)
                """
        )
    }

    /// Stores `incidents` of a log while it holds fewer than `limit`; counts the others (a duplicate of a kept
    /// incident is neither stored again nor counted).
    /// - Returns: how many were not kept.
    static func keep(
        _ incidents: [CollectorIncident],
        _ db: Database,
        logId: [UInt8],
        receivedAt: AuditTimestamp,
        limit: Int
    ) throws -> Int {
        guard !incidents.isEmpty else { return 0 }
        let log = Data(logId)
        var held = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM incidents WHERE logId = ?", arguments: [log]) ?? 0
        var notKept = 0
        for incident in incidents {
            let arguments: StatementArguments = [
                log, Int64(clamping: incident.seq), incident.kind.rawValue, Data(incident.entryHash),
            ]
            if held >= limit {
                let known = try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM incidents WHERE logId = ? AND seq = ? AND kind = ? AND entryHash = ?)
                        """,
                    arguments: arguments
                )
                if known != true { notKept += 1 }
                continue
            }
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO incidents (logId, seq, kind, entryHash, bytes, reason, receivedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: arguments + [Data(incident.bytes), incident.reason, receivedAt.millisecondsSinceEpoch]
            )
            held += db.changesCount
        }
        if notKept > 0 {
            try db.execute(
                sql: """
                    INSERT INTO incidentsNotKept (logId, count) VALUES (?, ?)
                    ON CONFLICT(logId) DO UPDATE SET count = count + excluded.count
                    """,
                arguments: [log, notKept]
            )
        }
        return notKept
    }

    /// How many incidents of a log were not kept because of the bound.
    static func incidentsNotKept(_ db: Database, logId: [UInt8]) throws -> UInt64 {
        let count = try Int64.fetchOne(
            db,
            sql: "SELECT count FROM incidentsNotKept WHERE logId = ?",
            arguments: [Data(logId)]
        )
        return UInt64(clamping: count ?? 0)
    }
}
