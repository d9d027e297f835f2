import AuditChain
import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import DurableSQLite

/// The durable ``LogStorage``: SQLite in WAL mode with `synchronous = FULL`, through GRDB.
///
/// Writes are `BEGIN IMMEDIATE` transactions, so several processes (auditd and auditctl) on one file take turns
/// and always seal after the true head: one chain, never forked, never a reused sequence number. A commit
/// returns only once SQLite has synced the WAL.
public final class SQLiteLogStorage: LookupColumnStorage {
    let pool: DatabasePool
    /// The database file.
    public let path: String
    /// Checkpoints the WAL off the commit path.
    let checkpointer: BackgroundCheckpointer
    /// The last key source found, and the hash of the newest entry it was found from: a run of checkpoints or
    /// removal records after the last event is walked once, not by every transaction.
    private let keySourceCache = Mutex<(from: [UInt8], source: SealedEntry)?>(nil)

    /// Opens (creating if needed) the database at `path`.
    /// - Throws: ``LogStoreError`` if SQLite cannot open it or it has another schema.
    public init(path: String) throws {
        self.path = path
        do {
            pool = try DurableDatabase.open(path: path, label: "audit-log", migrate: Self.migrate)
        } catch let error as LogStoreError {
            throw error
        } catch let failure as DurableDatabase.Failure {
            throw LogStoreError(.storage, failure.message)
        } catch {
            throw LogStoreError(.storage, "cannot open the log database \(path): \(error)")
        }
        let checkpointer = BackgroundCheckpointer(path: path)
        self.checkpointer = checkpointer
        // The pool's writer connection lives as long as the pool, which this storage owns with the checkpointer.
        pool.writeWithoutTransaction { db in
            if let connection = db.sqliteConnection { checkpointer.install(on: connection) }
        }
    }

    deinit {
        checkpointer.stop()
    }

    /// 1: entries and metadata; 2: adds the delivery table (entries of a version-1 log all join it as pending);
    /// 3: adds the idempotency index (entries of older logs have no row in it); 4: adds its `stamped` column (rows
    /// of older logs say 0); 5: adds the subject key table (docs/FORMAT.md, section 13.9).
    /// 6: adds the key table's `sealed` counts and the index of erasure, hold and export records.
    static let schemaVersion = 6

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
        if let version, !["1", "2", "3", "4", "5", String(schemaVersion)].contains(version) {
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
        try migrateIdempotency(db)
        try migrateSubjects(db)
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

    func readSnapshot(_ db: Database) throws -> LogSnapshot {
        // Every append reads the head first: cached statements stepped with SQLite's C API, since compiling the
        // queries and building GRDB rows cost several times what running them does.
        var metadata: [String: String] = [:]
        try Self.forEachRow(db.cachedStatement(sql: "SELECT key, value FROM metadata"), in: db) { row in
            metadata[try Self.text(row, 0)] = try Self.text(row, 1)
        }
        var head: ChainHead?
        var newest: SealedEntry?
        try Self.forEachRow(
            db.cachedStatement(sql: "SELECT seq, bytes FROM entries ORDER BY seq DESC LIMIT 1"),
            in: db
        ) { row in
            let seq = sqlite3_column_int64(row, 0)
            guard seq >= 0 else { throw LogStoreError(.corruptState, "the newest entry has seq \(seq)") }
            // The head's hash is computed from the entry as stored, not read from the `hash` column (a copy for
            // lookups, which verification does not check): a damaged copy must not become what the next entry
            // chains from. An entry that does not parse, or that is stored under another number than its own
            // (the row's key was changed), gives a head with no hash: readers go on (verification reports a
            // malformed entry; a moved one leaves a gap), appends refuse it.
            let entry = (try? SealedEntry(serialized: Self.blob(row, 1))).flatMap {
                $0.header.seq == UInt64(seq) ? $0 : nil
            }
            head = ChainHead(logId: entry?.header.logId ?? [], seq: UInt64(seq), hash: entry?.entryHash ?? [])
            newest = entry
        }
        let source = try newest.flatMap { try self.keySource(from: $0, db) }
        return LogSnapshot(head: head, metadata: metadata, newest: newest, keySource: source)
    }

    /// ``LogSnapshot/keySource(from:previous:)``: usually the newest entry itself (an event). After a checkpoint or
    /// removal record, the cached source when the walk from the newest entry, or from the one it links to, was
    /// made before (the link makes it the same chain); else a walk.
    private func keySource(from newest: SealedEntry, _ db: Database) throws -> SealedEntry? {
        guard !LogSnapshot.namesDataKey(newest.header.kind) else { return newest }
        if let cached = keySourceCache.withLock({ $0 }),
            cached.from == newest.entryHash || cached.from == newest.header.prevHash
        {
            keySourceCache.withLock { $0 = (newest.entryHash, cached.source) }
            return cached.source
        }
        let source = try LogSnapshot.keySource(from: newest) { seq in
            guard let key = Int64(exactly: seq) else { return nil }
            let statement = try db.cachedStatement(sql: "SELECT bytes FROM entries WHERE seq = ?")
            sqlite3_bind_int64(statement.sqliteStatement, 1, key)
            var bytes: [UInt8]?
            try Self.forEachRow(statement, in: db) { row in bytes = Self.blob(row, 0) }
            return bytes
        }
        if let source { keySourceCache.withLock { $0 = (newest.entryHash, source) } }
        return source
    }

    /// Steps `statement` to its end, calling `body` with each row, and resets it.
    private static func forEachRow(
        _ statement: Statement,
        in db: Database,
        _ body: (OpaquePointer) throws -> Void
    ) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                throw LogStoreError(
                    .storage,
                    "cannot read the log's head or metadata: SQLite error \(code): \(message)"
                )
            }
            try body(handle)
        }
    }

    /// Column `index` of the current row as UTF-8 text (its whole length); NULL is refused.
    private static func text(_ row: OpaquePointer, _ index: Int32) throws -> String {
        guard let characters = sqlite3_column_text(row, index) else {
            throw LogStoreError(.corruptState, "a metadata row holds NULL")
        }
        let count = Int(sqlite3_column_bytes(row, index))
        return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes (empty for NULL).
    private static func blob(_ row: OpaquePointer, _ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(row, index))
        guard count > 0, let bytes = sqlite3_column_blob(row, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    public func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, any LogEntrySink) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await transaction { sink, snapshot in try body(snapshot, sink) }
    }

    /// One `BEGIN IMMEDIATE` transaction: `body` sees the head and a sink that inserts into the open transaction
    /// (and the database through it), and returns what to append after what it wrote to the sink.
    func transaction<Result: Sendable>(
        _ body: @Sendable (EntryWriter, LogSnapshot) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await pool.writeWithoutTransaction { db in
            var result: Result?
            try db.inTransaction(.immediate) {
                let snapshot = try self.readSnapshot(db)
                let writer = try EntryWriter(db, after: snapshot.head)
                defer { writer.close() }
                let (append, value) = try body(writer, snapshot)
                try writer.write(append.entries, priorities: append.entryPriorities)
                try writer.checkClaimsWritten()
                for (key, value) in append.metadata {
                    try db.cachedStatement(
                        sql:
                            "INSERT INTO metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
                    ).execute(arguments: [key, value])
                }
                result = value
                return .commit
            }
            return result!
        }
    }

    public func snapshot() throws -> LogSnapshot {
        try pool.read { try self.readSnapshot($0) }
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

    public func verifiableEntries(from: UInt64, through: UInt64, limit: Int) throws -> [VerifiableEntry] {
        let low = Int64(clamping: from)
        let high = Int64(clamping: through)
        return try pool.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT seq, bytes, hash, kind, time FROM entries WHERE seq BETWEEN ? AND ? ORDER BY seq LIMIT ?"
            )
            statement.setUncheckedArguments([low, high, limit])
            var page: [VerifiableEntry] = []
            page.reserveCapacity(max(0, min(limit, 4096)))
            let rows = try Row.fetchCursor(statement)
            while let row = try rows.next() {
                let seq: Int64 = row[0]
                let bytes = try row.withUnsafeData(atIndex: 1) { data in data.map { Array($0) } ?? [] }
                // Whatever the columns hold (sqlite3 can store text in an INTEGER column): a value of another type
                // is passed on as nil, which the verifier reports, rather than converted.
                let hash: [UInt8]? =
                    if case .blob(let data) = (row[2] as DatabaseValue).storage { Array(data) } else { nil }
                let kind: Int64? = if case .int64(let value) = (row[3] as DatabaseValue).storage { value } else { nil }
                let time: Int64? = if case .int64(let value) = (row[4] as DatabaseValue).storage { value } else { nil }
                page.append(
                    VerifiableEntry(
                        entry: StoredEntry(seq: UInt64(seq), bytes: bytes),
                        lookup: StoredLookup(hash: hash, kind: kind, time: time)
                    )
                )
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

extension SQLiteLogStorage {
    /// Inserts entries and their delivery rows into the open write transaction, checking that each continues the
    /// one before. Used on the database's writer thread only, while the transaction is open.
    ///
    /// The rows are bound with SQLite's C API straight from the entries' bytes (no `Data` copy, no argument
    /// array): this runs on the writer thread while the other threads sign, and its cost bounds bulk appends.
    final class EntryWriter: LogEntrySink {
        /// The database of the open transaction.
        let db: Database
        /// The seq of the first entry this transaction writes.
        let firstSeq: UInt64
        private var expected: UInt64
        /// The entry the next one must follow (``ChainRules/successor(_:of:)``).
        private var previous: ChainHead?
        private var open = true
        /// The highest seq an idempotency tag was claimed for in this transaction.
        var claimedThrough: UInt64?
        private let insertEntry: Statement
        private let insertDelivery: Statement
        /// The idempotency index's insert (``claim(_:for:occurredAtStamped:)``), looked up once per transaction.
        let insertClaim: Statement
        private var buffer: [UInt8] = []

        init(_ db: Database, after head: ChainHead?) throws {
            self.db = db
            expected = head.map { $0.seq + 1 } ?? 0
            firstSeq = expected
            previous = head
            insertEntry = try db.cachedStatement(
                sql: "INSERT INTO entries (seq, kind, time, hash, bytes) VALUES (?, ?, ?, ?, ?)"
            )
            insertDelivery = try db.cachedStatement(
                sql: """
                    INSERT INTO delivery (seq, priority, enqueued_at, attempts, state, reason, detail, hash, changed_at)
                    VALUES (?, ?, ?, 0, 0, '', '', ?, ?)
                    """
            )
            insertClaim = try db.cachedStatement(sql: "INSERT INTO idempotency (seq, tag, stamped) VALUES (?, ?, ?)")
        }

        /// Ends the writer's use: the transaction is over.
        func close() { open = false }

        /// Whether the transaction is still open.
        var isOpen: Bool { open }

        /// Refuses to commit a claim for an entry that was not written.
        func checkClaimsWritten() throws {
            guard let claimed = claimedThrough, claimed >= expected else { return }
            throw LogStoreError(
                .invalidInput,
                "an idempotency tag was claimed for seq \(claimed), which was not written"
            )
        }

        func write(_ entries: [SealedEntry], priorities: [DeliveryPriority]) throws {
            guard open else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
            guard entries.count == priorities.count else {
                throw LogStoreError(.invalidInput, "\(entries.count) entries but \(priorities.count) priorities")
            }
            // Indexing reads each entry in place; iterating (or zipping) would copy every entry.
            for index in entries.indices {
                let priority = priorities[index]
                if let violation = ChainRules.successor(entries[index].header, of: previous) {
                    throw LogStoreError(.corruptState, violation.description)
                }
                buffer.removeAll(keepingCapacity: true)
                entries[index].serialize(into: &buffer)
                guard let seq = Int64(exactly: expected) else {
                    throw LogStoreError(.corruptState, "no sequence number is left after \(expected - 1)")
                }
                let kind = Int64(entries[index].header.kind.rawValue)
                let time = entries[index].header.time.millisecondsSinceEpoch
                try entries[index].entryHash.withUnsafeBytes { hash in
                    try buffer.withUnsafeBytes { bytes in
                        try run(insertEntry, "insert entry \(seq)") { statement in
                            sqlite3_bind_int64(statement, 1, seq)
                            sqlite3_bind_int64(statement, 2, kind)
                            sqlite3_bind_int64(statement, 3, time)
                            sqlite3_bind_blob(statement, 4, hash.baseAddress, Int32(hash.count), nil)
                            sqlite3_bind_blob(statement, 5, bytes.baseAddress, Int32(bytes.count), nil)
                        }
                        try run(insertDelivery, "enqueue entry \(seq)") { statement in
                            sqlite3_bind_int64(statement, 1, seq)
                            sqlite3_bind_int64(statement, 2, Int64(priority.rawValue))
                            sqlite3_bind_int64(statement, 3, time)
                            sqlite3_bind_blob(statement, 4, hash.baseAddress, Int32(hash.count), nil)
                            sqlite3_bind_int64(statement, 5, time)
                        }
                    }
                }
                previous = ChainHead(logId: entries[index].header.logId, seq: expected, hash: entries[index].entryHash)
                expected += 1
            }
        }

        /// Binds (with `SQLITE_STATIC`: the buffers outlive the step), steps once, and resets the statement, so no
        /// binding points at a buffer after this returns.
        private func run(
            _ statement: Statement,
            _ what: @autoclosure () -> String,
            bind: (OpaquePointer) -> Void
        )
            throws
        {
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            bind(handle)
            let code = sqlite3_step(handle)
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            guard code == SQLITE_DONE else {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                let extended = sqlite3_extended_errcode(db.sqliteConnection)
                // SQLITE_CONSTRAINT_PRIMARYKEY, a macro Swift does not import.
                guard extended != SQLITE_CONSTRAINT | (6 << 8) else {
                    // The new entry continues the newest one, so only rows left behind by removed entries can
                    // hold its number (the delivery queue's, when entries alone were deleted).
                    throw LogStoreError(
                        .corruptState,
                        "cannot \(what()): its sequence number is taken (SQLite error \(extended): \(message)): "
                            + "entries after the log's newest one were removed behind its back. Appends are refused "
                            + "so that no sequence number is used twice; `auditctl verify --checkpoint FILE` shows "
                            + "what is missing"
                    )
                }
                throw LogStoreError(.storage, "cannot \(what()): SQLite error \(code): \(message)")
            }
        }
    }
}
