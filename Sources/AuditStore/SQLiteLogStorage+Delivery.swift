import AuditChain
import Foundation
import GRDB

/// The delivery table beside the entries, written in the same transactions as the log.
extension SQLiteLogStorage {
    static func migrateDelivery(_ db: Database, enqueueExisting: Bool) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS delivery (
                    seq INTEGER PRIMARY KEY,
                    priority INTEGER NOT NULL,
                    enqueued_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    state INTEGER NOT NULL DEFAULT 0,
                    reason TEXT NOT NULL DEFAULT '',
                    detail TEXT NOT NULL DEFAULT '',
                    hash BLOB NOT NULL,
                    changed_at INTEGER NOT NULL
                )
                """
        )
        guard enqueueExisting else { return }
        // A log written before the delivery table existed: nothing of it was delivered, so all of it is pending.
        // Event payloads are encrypted, so their catalogue priority is unknown here: they count as critical.
        // The kind → priority mapping comes from DeliveryPriority.of(kind:), the one appends use.
        let priority = RecordKind.allCases.map { "WHEN \($0.rawValue) THEN \(DeliveryPriority.of(kind: $0).rawValue)" }
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO delivery (seq, priority, enqueued_at, hash, changed_at)
                SELECT seq, CASE kind \(priority.joined(separator: " ")) ELSE \(DeliveryPriority.critical.rawValue) END,
                    time, hash, time
                FROM entries
                """
        )
    }

    private static let columns = "seq, priority, enqueued_at, attempts, state, reason, detail, hash, changed_at"

    /// A row read back. The table is unsigned state anyone who can write the file may change: a value out of range
    /// is `corruptState`, never a trap.
    private static func item(_ row: Row) throws -> DeliveryItem {
        let stored: Int64 = row[0]
        let hash: Data = row[7]
        guard let seq = UInt64(exactly: stored) else {
            throw LogStoreError(.corruptState, "a delivery row has seq \(stored), which no entry can have")
        }
        return DeliveryItem(
            seq: seq,
            priority: DeliveryPriority(rawValue: row[1]) ?? .critical,
            enqueuedAt: row[2],
            attempts: row[3],
            state: DeliveryState(rawValue: row[4]) ?? .pending,
            reason: row[5],
            detail: row[6],
            hash: Array(hash),
            changedAt: row[8]
        )
    }

    /// Loads the rows of `scope` with queries (the same rows as ``DeliveryTable/scoped(_:)``) and counts the rest.
    static func readDelivery(_ db: Database, scope: DeliveryScope = .all) throws -> DeliveryTable {
        var table = DeliveryTable()
        func load(_ condition: String, _ arguments: StatementArguments = []) throws {
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT \(columns) FROM delivery WHERE \(condition)",
                arguments: arguments
            )
            while let row = try rows.next() {
                let item = try item(row)
                table.items[item.seq] = item
            }
        }
        let system = DeliveryPriority.system.rawValue
        let pending = DeliveryState.pending.rawValue
        // One pass counts every state (a state this build does not know reads as pending, as its rows do).
        var counts: [DeliveryState: Int] = [:]
        var pendingEvents = 0
        if scope.counts, scope != .all {
            let (dlq, removed) = (DeliveryState.dlq.rawValue, DeliveryState.removed.rawValue)
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT total(state NOT IN (\(dlq), \(removed))),
                        total(state NOT IN (\(dlq), \(removed)) AND priority < ?),
                        total(state = \(dlq)), total(state = \(removed))
                    FROM delivery
                    """,
                arguments: [system]
            )
            // `total()` sums as a double; counts of rows are far below 2^53, so the conversion is exact.
            let totals = (0..<4).map { index -> Int in
                let value = (row?[index] as Double?) ?? 0
                return value.isFinite && value >= 0 && value < 9e15 ? Int(value) : 0
            }
            counts = [.pending: totals[0], .dlq: totals[2], .removed: totals[3]]
            pendingEvents = totals[1]
        }
        switch scope {
        case .all:
            try load("1")
            return table
        case .counts:
            break
        case .rows(let seqs):
            let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM delivery WHERE seq = ?")
            for seq in seqs {
                guard let signed = Int64(exactly: seq), let row = try Row.fetchOne(statement, arguments: [signed])
                else { continue }
                table.items[seq] = try item(row)
            }
        case .head(let count):
            try load("state = \(DeliveryState.dlq.rawValue)")
            try load("state = \(pending) ORDER BY seq LIMIT ?", [max(0, count)])
        case .lowest(let count):
            try load("1 ORDER BY seq LIMIT ?", [max(0, count)])
        case .limits(let now, let policy):
            try load(
                "state != \(pending) OR (priority < ? AND enqueued_at < ?)",
                [system, now - policy.maxAge.milliseconds]
            )
            if pendingEvents > policy.maxEvents {
                try load(
                    "state = \(pending) AND priority < ? ORDER BY priority, seq LIMIT ?",
                    [system, pendingEvents - policy.maxEvents]
                )
            }
            if let range = DeliveryScope.removalRange(table.items.values, policy: policy) {
                try load(
                    "state = \(pending) AND seq BETWEEN ? AND ?",
                    [Int64(clamping: range.lowerBound), Int64(clamping: range.upperBound)]
                )
            }
        }
        guard scope.counts else { return table }
        table.unloaded = counts
        table.unloadedPendingEvents = pendingEvents
        for item in table.items.values {
            table.unloaded[item.state, default: 0] -= 1
            if item.state == .pending, item.priority < .system { table.unloadedPendingEvents -= 1 }
        }
        table.unloaded = table.unloaded.filter { $0.value != 0 }
        return table
    }

    /// Writes the rows that differ between `old` and `new`.
    static func writeDelivery(_ db: Database, from old: DeliveryTable, to new: DeliveryTable) throws {
        let (deleted, upserted) = new.changes(from: old)
        let delete = try db.cachedStatement(sql: "DELETE FROM delivery WHERE seq = ?")
        for seq in deleted {
            try delete.execute(arguments: [Int64(seq)])
        }
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO delivery (seq, priority, enqueued_at, attempts, state, reason, detail, hash, changed_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(seq) DO UPDATE SET priority = excluded.priority, enqueued_at = excluded.enqueued_at,
                    attempts = excluded.attempts, state = excluded.state, reason = excluded.reason,
                    detail = excluded.detail, hash = excluded.hash, changed_at = excluded.changed_at
                """
        )
        for item in upserted {
            try upsert.execute(arguments: [
                Int64(item.seq), item.priority.rawValue, item.enqueuedAt, item.attempts, item.state.rawValue,
                item.reason,
                item.detail, Data(item.hash), item.changedAt,
            ])
        }
    }

    public func withDelivery<Result: Sendable>(
        scope: DeliveryScope,
        _ body: @Sendable (LogSnapshot, inout DeliveryTable, any LogEntryReader) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await transaction { writer, snapshot in
            let db = writer.db
            let old = try Self.readDelivery(db, scope: scope)
            var table = old
            let (append, result) = try body(snapshot, &table, TransactionReader(db: db))
            try Self.writeDelivery(db, from: old, to: table)
            return (append, result)
        }
    }

    public func deliveryTable(scope: DeliveryScope) throws -> DeliveryTable {
        try pool.read { try Self.readDelivery($0, scope: scope) }
    }

    /// Reads entries through the connection of the transaction that received it.
    private struct TransactionReader: LogEntryReader {
        let db: Database

        func count(from: UInt64, through: UInt64) throws -> Int {
            guard from <= through else { return 0 }
            let statement = try db.cachedStatement(sql: "SELECT count(*) FROM entries WHERE seq BETWEEN ? AND ?")
            return try Int.fetchOne(statement, arguments: [Int64(clamping: from), Int64(clamping: through)]) ?? 0
        }

        func entry(at seq: UInt64) throws -> StoredEntry? {
            guard let key = Int64(exactly: seq) else { return nil }
            let statement = try db.cachedStatement(sql: "SELECT bytes FROM entries WHERE seq = ?")
            return try Data.fetchOne(statement, arguments: [key]).map { StoredEntry(seq: seq, bytes: Array($0)) }
        }
    }

    public func prune(
        through: UInt64,
        keep: Set<UInt64>,
        _ body: @Sendable (LogSnapshot) throws -> LogAppend
    ) async throws -> Int {
        try await transaction { writer, snapshot in
            let db = writer.db
            let undelivered = try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM delivery WHERE seq <= ? AND seq > 0",
                arguments: [Int64(clamping: through)]
            )
            guard undelivered == 0 else {
                throw LogStoreError(.corruptState, "retention refused: entries up to \(through) are not all delivered")
            }
            let append = try body(snapshot)
            let keepList = keep.map { String($0) }.joined(separator: ",")
            try db.execute(
                sql: "DELETE FROM entries WHERE seq <= ? AND seq NOT IN (\(keepList.isEmpty ? "-1" : keepList))",
                arguments: [Int64(clamping: through)]
            )
            return (append, db.changesCount)
        }
    }
}
