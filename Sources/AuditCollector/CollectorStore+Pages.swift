import AuditChain
public import CollectorUI
import Crypto
import Foundation

/// What the operators' pages read (docs/COLLECTOR-UI.md): the fleet's facts in a few aggregate queries over every
/// log (no query per log), the lists of one log's page, and what an incident's evidence bundle holds. Each runs in
/// one read transaction.
extension CollectorStore {
    /// One row of facts per log the collector holds entries or incidents of; `only` restricts it to one log. The
    /// rows leave ``FleetLog/held`` nil (the head endpoint's status counts it, for the log's page). Device ids are not read here
    /// (``deviceIds(_:)`` reads them for the rows a page shows).
    public func fleet(only logId: [UInt8]? = nil) async throws -> [FleetLog] {
        try await database.read { db in
            let filter = logId == nil ? "" : " WHERE logId = ?"
            let arguments: [SQLValue] = logId.map { [.blob($0)] } ?? []
            var logs: [[UInt8]: FleetLog] = [:]
            func update(_ row: SQLRow, _ body: (inout FleetLog) throws -> Void) throws {
                let id = try row.blob("logId")
                var log = logs[id] ?? FleetLog(logId: Hex.encode(id))
                try body(&log)
                logs[id] = log
            }
            // The highest seq and when it was stored: two seeks in the (logId, seq) index per log, over the logs
            // the keys table names (a log's entries are stored only under keys its genesis or rotations gave), not
            // a scan of every entry. The count of entries held is not read here: counting costs a scan of each
            // log's entries (a fleet with a log of a million entries spent most of the page's time on it); the log's
            // page counts it (the head endpoint's LogStatus.held).
            let held = try db.rows(
                logId == nil
                    ? """
                    SELECT k.logId AS logId, e.seq AS highest, e.receivedAt AS receivedAt
                    FROM (SELECT DISTINCT logId FROM keys) AS k
                    JOIN entries AS e ON e.logId = k.logId
                        AND e.seq = (SELECT MAX(seq) FROM entries WHERE logId = k.logId)
                    """
                    : """
                    SELECT logId, seq AS highest, receivedAt FROM entries WHERE logId = ? ORDER BY seq DESC LIMIT 1
                    """,
                arguments
            )
            for row in held {
                try update(row) { log in
                    log.highestSeq = try row.unsigned("highest")
                    log.lastIngest = AuditTimestamp(millisecondsSinceEpoch: try row.integer("receivedAt"))
                }
            }
            for row in try db.rows(
                "SELECT logId, kind, COUNT(*) AS n FROM incidents\(filter) GROUP BY logId, kind",
                arguments
            ) {
                try update(row) { log in
                    let count = try row.unsigned("n")
                    switch try row.text("kind") {
                    case CollectorIncident.Kind.fork.rawValue: log.forks = count
                    case CollectorIncident.Kind.chainBreak.rawValue: log.chainBreaks = count
                    default: log.checkpointConflicts += count
                    }
                }
            }
            // The facts below describe logs found above; a row of a log with neither entries nor incidents is left
            // out, as the head endpoint does.
            func known(_ row: SQLRow, _ body: (inout FleetLog) throws -> Void) throws {
                guard logs[try row.blob("logId")] != nil else { return }
                try update(row, body)
            }
            for row in try db.rows("SELECT logId, seq FROM heads\(filter)", arguments) {
                try known(row) { $0.headSeq = try row.unsigned("seq") }
            }
            for row in try db.rows("SELECT logId, size FROM trees\(filter)", arguments) {
                try known(row) { $0.treeSize = try row.unsigned("size") }
            }
            for row in try db.rows("SELECT logId, seq, receivedAt FROM checkpoints\(filter)", arguments) {
                try known(row) { log in
                    log.deviceCheckpointSeq = try row.unsigned("seq")
                    log.deviceCheckpointAt = AuditTimestamp(millisecondsSinceEpoch: try row.integer("receivedAt"))
                }
            }
            for row in try db.rows("SELECT logId, count FROM incidentsNotKept\(filter)", arguments) {
                try known(row) { $0.incidentsNotKept = try row.unsigned("count") }
            }
            for row in try db.rows("SELECT logId, COUNT(*) AS n FROM removals\(filter) GROUP BY logId", arguments) {
                try known(row) { $0.removalRecords = try row.unsigned("n") }
            }
            for row in try db.rows(
                "SELECT logId, MAX(size) AS size FROM witness_sizes\(filter) GROUP BY logId",
                arguments
            ) {
                try known(row) { $0.witnessedSize = try row.unsigned("size") }
            }
            // One log's row (its page) carries its epoch; the fleet page reads the epochs of the rows it shows
            // (``epochStatuses(logIds:)``), as it does their device ids.
            if let logId, let epoch = try Self.epochStatuses(db, only: logId)[logId] {
                logs[logId]?.epoch = epoch.state
                logs[logId]?.closed = epoch.closed
                logs[logId]?.epochStale = epoch.isStale(at: AuditTimestamp.now())
            }
            return logs.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { logs[$0] }
        }
    }

    /// The device ids the genesis entries of these logs (lowercase hex ids) name, for the logs whose genesis is held.
    public func deviceIds(_ logIds: [String]) async throws -> [String: String] {
        try await database.read { db in
            var ids: [String: String] = [:]
            for hex in logIds {
                guard let logId = Hex.decode(hex),
                    let bytes = try db.blob("SELECT bytes FROM entries WHERE logId = ? AND seq = 0", [.blob(logId)]),
                    let deviceId = GenesisFacts.deviceId(bytes)
                else { continue }
                ids[hex] = deviceId
            }
            return ids
        }
    }

    /// Where the epochs of the given logs (hex ids; the rows a fleet page shows) stand: the version 2 logs among them,
    /// one small query each (``epochStatuses(_:only:)``).
    public func epochStatuses(logIds: [String]) async throws -> [String: LogStatus.Epoch] {
        try await database.read { db in
            var found: [String: LogStatus.Epoch] = [:]
            for hex in logIds {
                guard let logId = Hex.decode(hex), let epoch = try Self.epochStatuses(db, only: logId)[logId] else {
                    continue
                }
                found[hex] = epoch
            }
            return found
        }
    }

    /// The logs whose genesis names `deviceId` (a device re-initialized has several), at most `limit`, by log id: one
    /// seek per log the keys table names and the genesis parsed, no scan of the entries.
    public func logIds(deviceId: String, limit: Int) async throws -> [[UInt8]] {
        try await database.read { db in
            var found: [[UInt8]] = []
            for row in try db.rows("SELECT DISTINCT logId FROM keys ORDER BY logId", []) {
                let logId = try row.blob("logId")
                guard let bytes = try db.blob("SELECT bytes FROM entries WHERE logId = ? AND seq = 0", [.blob(logId)]),
                    GenesisFacts.deviceId(bytes) == deviceId
                else { continue }
                found.append(logId)
                if found.count >= limit { break }
            }
            return found
        }
    }

    /// The latest `limit` entries held of a log, newest first.
    public func latestEntries(logId: [UInt8], limit: Int) async throws -> [LogPage.Entry] {
        try await database.read { db in
            try db.rows(
                "SELECT seq, entryHash, bytes FROM entries WHERE logId = ? ORDER BY seq DESC LIMIT ?",
                [.blob(logId), .integer(Int64(limit))]
            ).map { row in
                LogPage.Entry(
                    seq: try row.unsigned("seq"),
                    bytes: try row.blob("bytes"),
                    entryHash: try row.blob("entryHash")
                )
            }
        }
    }

    /// The latest `limit` removal records held of a log, newest first, with their reasons.
    public func removalRecords(logId: [UInt8], limit: Int) async throws -> [LogPage.Removal] {
        try await database.read { db in
            try db.rows(
                """
                SELECT r.recordSeq AS recordSeq, r.firstSeq AS firstSeq, r.lastSeq AS lastSeq, r.count AS count,
                    e.bytes AS bytes
                FROM removals AS r LEFT JOIN entries AS e ON e.logId = r.logId AND e.seq = r.recordSeq
                WHERE r.logId = ? ORDER BY r.recordSeq DESC LIMIT ?
                """,
                [.blob(logId), .integer(Int64(limit))]
            ).map { row in
                LogPage.Removal(
                    recordSeq: try row.unsigned("recordSeq"),
                    firstSeq: try row.unsigned("firstSeq"),
                    lastSeq: try row.unsigned("lastSeq"),
                    count: try row.unsigned("count"),
                    recordBytes: try SQLRow.blob(try row.value("bytes"), "bytes")
                )
            }
        }
    }

    /// The incidents kept of a log, by seq (at most ``maxIncidentsPerLog``, the bound of what is kept).
    public func incidentList(logId: [UInt8]) async throws -> [LogPage.Incident] {
        let limit = maxIncidentsPerLog
        return try await database.read { db in
            try db.rows(
                "SELECT seq, kind, entryHash, reason FROM incidents WHERE logId = ? ORDER BY seq, receivedAt LIMIT ?",
                [.blob(logId), .integer(Int64(limit))]
            ).map { row in
                LogPage.Incident(
                    seq: try row.unsigned("seq"),
                    kind: try row.text("kind"),
                    reason: try row.text("reason"),
                    entryHash: try row.blob("entryHash")
                )
            }
        }
    }

    /// Per witness (its vkey): how many logs it cosigned and the largest size it cosigned.
    public func witnessTotals() async throws -> [String: (logs: UInt64, largest: UInt64)] {
        try await database.read { db in
            var totals: [String: (logs: UInt64, largest: UInt64)] = [:]
            for row in try db.rows(
                "SELECT witness, COUNT(*) AS logs, MAX(size) AS largest FROM witness_sizes GROUP BY witness",
                []
            ) {
                totals[try row.text("witness")] = (try row.unsigned("logs"), try row.unsigned("largest"))
            }
            return totals
        }
    }

    /// What an incident's evidence bundle holds.
    struct Evidence: Sendable {
        var genesis: [UInt8]?
        var held: [UInt8]?
        var refused: [UInt8]
        var publicKeys: [[UInt8]]
    }

    /// The kept incident's refused bytes, the held entry at its seq, the genesis and the log's keys; nil when no
    /// such incident is kept.
    func evidence(logId: [UInt8], seq: UInt64, kind: String, entryHash: [UInt8]) async throws -> Evidence? {
        guard let key = Int64(exactly: seq) else { return nil }
        return try await database.read { db in
            let log = SQLValue.blob(logId)
            guard
                let refused = try db.blob(
                    "SELECT bytes FROM incidents WHERE logId = ? AND seq = ? AND kind = ? AND entryHash = ?",
                    [log, .integer(key), .text(kind), .blob(entryHash)]
                )
            else { return nil }
            let keys = try Self.keys(db, logId: logId).values.sorted { $0.fromSeq < $1.fromSeq }
            return Evidence(
                genesis: try db.blob("SELECT bytes FROM entries WHERE logId = ? AND seq = 0", [log]),
                held: try db.blob("SELECT bytes FROM entries WHERE logId = ? AND seq = ?", [log, .integer(key)]),
                refused: refused,
                publicKeys: keys.map { Array($0.publicKey.rawRepresentation) }
            )
        }
    }
}
