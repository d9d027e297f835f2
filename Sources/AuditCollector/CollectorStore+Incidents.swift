import AuditChain
import Foundation

/// Incidents kept as evidence (forks, chain breaks, checkpoint conflicts), bounded per log: a token holder can send
/// any number of contradicting entries, and each incident stores the refused entry's bytes. Past the bound, new
/// incidents are counted, not kept (`incidentsNotKept` in the head endpoint, a log line per batch).
extension CollectorStore {
    /// Default bound on the incidents kept per log. The first contradictions are the evidence; a thousand of them,
    /// each holding an entry of at most a batch's size, bounds what one log can make the collector store.
    public static let defaultMaxIncidentsPerLog = 1000

    /// Stores `incidents` of a log while it holds fewer than `limit`; counts the others (a duplicate of a kept
    /// incident is neither stored again nor counted).
    /// - Returns: how many were not kept.
    static func keep(
        _ incidents: [CollectorIncident],
        _ db: any SQLSession,
        logId: [UInt8],
        receivedAt: AuditTimestamp,
        limit: Int
    ) throws -> Int {
        guard !incidents.isEmpty else { return 0 }
        let log = SQLValue.blob(logId)
        var held = try db.integer("SELECT COUNT(*) FROM incidents WHERE logId = ?", [log]) ?? 0
        var notKept = 0
        for incident in incidents {
            let arguments: [SQLValue] = [
                log, .integer(Int64(clamping: incident.seq)), .text(incident.kind.rawValue), .blob(incident.entryHash),
            ]
            if held >= Int64(limit) {
                let known = try db.exists(
                    "SELECT 1 FROM incidents WHERE logId = ? AND seq = ? AND kind = ? AND entryHash = ?",
                    arguments
                )
                if !known { notKept += 1 }
                continue
            }
            let stored = try db.rows(
                """
                INSERT INTO incidents (logId, seq, kind, entryHash, bytes, reason, receivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1
                """,
                arguments + [
                    .blob(incident.bytes), .text(incident.reason), .integer(receivedAt.millisecondsSinceEpoch),
                ]
            )
            held += Int64(stored.count)
        }
        if notKept > 0 {
            try db.execute(
                """
                INSERT INTO incidentsNotKept (logId, count) VALUES (?, ?)
                ON CONFLICT (logId) DO UPDATE SET count = incidentsNotKept.count + excluded.count
                """,
                [log, .integer(Int64(notKept))]
            )
        }
        return notKept
    }

    /// How many incidents of a log were not kept because of the bound.
    static func incidentsNotKept(_ db: any SQLSession, logId: [UInt8]) throws -> UInt64 {
        let count = try db.integer("SELECT count FROM incidentsNotKept WHERE logId = ?", [.blob(logId)])
        return UInt64(clamping: count ?? 0)
    }
}
