import AuditChain
import Foundation
import GRDB

/// The durable ``LogStorage``: SQLite in WAL mode with `synchronous = FULL`, through GRDB.
///
/// Writes are `BEGIN IMMEDIATE` transactions, so several processes (auditd and auditctl) on one file take turns
/// and always seal after the true head: one chain, never forked, never a reused sequence number. A commit
/// returns only once SQLite has synced the WAL.
public final class SQLiteLogStorage: LogStorage {
    let pool: DatabasePool
    /// The database file.
    public let path: String

    /// Opens (creating if needed) the database at `path`.
    /// - Throws: ``LogStoreError`` if SQLite cannot open it or it has another schema.
    public init(path: String) throws {
        self.path = path
        do {
            pool = try DurableDatabase.open(path: path, label: "audit-log", migrate: Self.migrate)
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(.storage, "cannot open the log database \(path): \(error)")
        }
    }

    /// 1: entries and metadata; 2: adds the delivery table (entries of a version-1 log all join it as pending).
    static let schemaVersion = 2

    private static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS entries (
                    seq INTEGER PRIMARY KEY,
                    kind INTEGER NOT NULL,
                    time INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    bytes BLOB NOT NULL
                );
                CREATE TABLE IF NOT EXISTS metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """
        )
        let version = try String.fetchOne(db, sql: "SELECT value FROM metadata WHERE key = 'schemaVersion'")
        if let version, version != "1", version != String(schemaVersion) {
            throw LogStoreError(
                .corruptState,
                "the log database has schema version \(version), expected \(schemaVersion)"
            )
        }
        if version == "1" {
            try migrateDelivery(db, enqueueExisting: true)
        } else if version == nil {
            try migrateDelivery(db, enqueueExisting: false)
        }
        if version != String(schemaVersion) {
            try db.execute(
                sql: """
                    INSERT INTO metadata (key, value) VALUES ('schemaVersion', ?)
                    ON CONFLICT(key) DO UPDATE SET value = excluded.value
                    """,
                arguments: [String(schemaVersion)]
            )
        }
    }

    static func readSnapshot(_ db: Database) throws -> LogSnapshot {
        var metadata: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM metadata") {
            metadata[row["key"]] = row["value"]
        }
        var head: ChainHead?
        if let row = try Row.fetchOne(
            db,
            sql: "SELECT seq, hash, substr(bytes, 9, 16) AS logId FROM entries ORDER BY seq DESC LIMIT 1"
        ) {
            let seq: Int64 = row["seq"]
            let hash: Data = row["hash"]
            let logId: Data = row["logId"]
            head = ChainHead(logId: Array(logId), seq: UInt64(seq), hash: Array(hash))
        }
        return LogSnapshot(head: head, metadata: metadata)
    }

    public func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await transaction { _, snapshot in try body(snapshot) }
    }

    /// One `BEGIN IMMEDIATE` transaction: `body` sees the database and the head, and returns what to append.
    func transaction<Result: Sendable>(
        _ body: @Sendable (Database, LogSnapshot) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await pool.writeWithoutTransaction { db in
            var result: Result?
            try db.inTransaction(.immediate) {
                let snapshot = try Self.readSnapshot(db)
                let (append, value) = try body(db, snapshot)
                var expected = snapshot.head.map { $0.seq + 1 } ?? 0
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO entries (seq, kind, time, hash, bytes) VALUES (?, ?, ?, ?, ?)"
                )
                for entry in append.entries {
                    guard entry.header.seq == expected else {
                        throw LogStoreError(
                            .corruptState,
                            "entry \(entry.header.seq) does not continue the head \(expected - 1)"
                        )
                    }
                    expected += 1
                    // The arguments match the statement's five parameters: no per-row validation.
                    insert.setUncheckedArguments([
                        Int64(entry.header.seq), Int(entry.header.kind.rawValue),
                        entry.header.time.millisecondsSinceEpoch, Data(entry.entryHash), Data(entry.serialized),
                    ])
                    try insert.execute()
                }
                try Self.enqueue(db, append)
                for (key, value) in append.metadata {
                    try db.execute(
                        sql:
                            "INSERT INTO metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                        arguments: [key, value]
                    )
                }
                result = value
                return .commit
            }
            return result!
        }
    }

    public func snapshot() throws -> LogSnapshot {
        try pool.read { try Self.readSnapshot($0) }
    }

    public func entries(from: UInt64, through: UInt64, limit: Int) throws -> [StoredEntry] {
        let low = Int64(clamping: from)
        let high = Int64(clamping: through)
        return try pool.read { db in
            // A cached statement and a cursor: each row's bytes are copied once, straight from SQLite's buffer.
            let statement = try db.cachedStatement(
                sql: "SELECT seq, bytes FROM entries WHERE seq BETWEEN ? AND ? ORDER BY seq LIMIT ?"
            )
            statement.setUncheckedArguments([low, high, limit])
            var page: [StoredEntry] = []
            page.reserveCapacity(max(0, min(limit, 4096)))
            let rows = try Row.fetchCursor(statement)
            while let row = try rows.next() {
                let seq: Int64 = row[0]
                let bytes = try row.withUnsafeData(atIndex: 1) { data in data.map { Array($0) } ?? [] }
                page.append(StoredEntry(seq: UInt64(seq), bytes: bytes))
            }
            return page
        }
    }

    public func size() throws -> (count: Int, bytes: Int) {
        try pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: "SELECT count(*) AS n, coalesce(sum(length(bytes)), 0) AS b FROM entries"
            )
            return (row?["n"] ?? 0, row?["b"] ?? 0)
        }
    }
}
