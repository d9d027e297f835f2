public import AuditChain
import Foundation
import GRDB
import GRDBSQLite

/// The subject key table (docs/FORMAT.md, section 13.9): one row per subject, its tag and its secret wrapped under
/// the log's subject master key. An erasure deletes the row with `secure_delete` in the transaction that seals the
/// erasure record, then a truncating checkpoint leaves no copy in the WAL.
extension SQLiteLogStorage {
    /// Creates the table (schema version 5) and its `sealed` count column, with the index of the records that
    /// name subjects' keys (schema version 6).
    static func migrateSubjects(_ db: Database) throws {
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS subject_keys (tag BLOB PRIMARY KEY, wrapped BLOB NOT NULL) WITHOUT ROWID"
        )
        // A row made before the count has none (NULL): its erasure counts its events by reading the log.
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(subject_keys)").map { row -> String in row["name"] }
        if !columns.contains("sealed") {
            try db.execute(sql: "ALTER TABLE subject_keys ADD COLUMN sealed INTEGER")
        }
        // Erasure and export records are rare: a partial index finds them without reading every entry.
        try db.execute(
            sql: """
                CREATE INDEX IF NOT EXISTS entries_subject_records ON entries (kind)
                WHERE kind IN (\(subjectRecordKinds))
                """
        )
    }

    /// The kinds the partial index holds (erasure, legal hold, subject key export), as SQL literals: a query must
    /// name its kind as a literal for SQLite to use the index.
    static let subjectRecordKinds = [RecordKind.erasure, .legalHold, .subjectKeyExport]
        .map { String($0.rawValue) }.joined(separator: ", ")

    /// The query of ``entries(ofKind:)``: the kind as a literal (a number from the enum, not input), with the
    /// partial index's own condition for its kinds, so that SQLite's planner uses the index.
    static func entriesOfKindSQL(_ kind: RecordKind) -> String {
        let indexed = [RecordKind.erasure, .legalHold, .subjectKeyExport].contains(kind)
        return "SELECT seq, bytes FROM entries WHERE kind = \(kind.rawValue)"
            + (indexed ? " AND kind IN (\(subjectRecordKinds))" : "") + " ORDER BY seq"
    }

    /// Every row of the key table (``LogStorage/subjectSecrets()``).
    public func subjectSecrets() throws -> [(tag: [UInt8], wrapped: [UInt8])] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT tag, wrapped FROM subject_keys").map { row in
                let tag: Data = row[0]
                let wrapped: Data = row[1]
                return (tag: Array(tag), wrapped: Array(wrapped))
            }
        }
    }

    /// Every entry whose `kind` column is `kind`, in sequence order (the column is a lookup copy; callers parse
    /// the bytes). The kinds of erasure, hold and export records are found through their index; any other kind
    /// reads the whole table.
    public func entries(ofKind kind: RecordKind) throws -> [StoredEntry] {
        try pool.read { db in
            try Row.fetchAll(db, sql: Self.entriesOfKindSQL(kind)).map { row in
                let seq: Int64 = row[0]
                let bytes: Data = row[1]
                return StoredEntry(seq: UInt64(max(seq, 0)), bytes: Array(bytes))
            }
        }
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)` until it completes (``LogStorage/scrubErased()``): the pages the erasure
    /// zeroed go home and the WAL is emptied.
    public func scrubErased() throws {
        try pool.writeWithoutTransaction { db in
            // Busy readers can keep a checkpoint from finishing: a few tries, then the failure is the caller's.
            for attempt in 0..<50 {
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                let busy: Int = row?[0] ?? 1
                if busy == 0 { return }
                if attempt < 49 { usleep(20_000) }
            }
            throw LogStoreError(
                .storage,
                "the erasure is committed, but readers kept the WAL of \(path) from being truncated: run the same "
                    + "`auditctl erase` again once they are done (it scrubs, whether or not it has anything left to "
                    + "erase), so that no copy of the erased row remains"
            )
        }
    }
}

extension SQLiteLogStorage.EntryWriter {
    func subjectSecret(tag: [UInt8]) throws -> [UInt8]? {
        let data = try Data.fetchOne(
            db,
            sql: "SELECT wrapped FROM subject_keys WHERE tag = ?",
            arguments: [Data(tag)]
        )
        return data.map { Array($0) }
    }

    func storeSubjectSecret(tag: [UInt8], wrapped: [UInt8]) throws {
        guard isOpen else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
        try withSecureDelete("FAST") {
            try db.execute(
                sql: "INSERT INTO subject_keys (tag, wrapped, sealed) VALUES (?, ?, 0)",
                arguments: [Data(tag), Data(wrapped)]
            )
        }
    }

    func addSubjectEvents(tag: [UInt8], count: Int) throws {
        guard isOpen else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
        // A row that outgrows its cell moves within its page: FAST zeroes the cell it leaves (the old copy holds
        // the wrapped secret), at no extra I/O. A row made before the count (NULL) stays without one.
        try withSecureDelete("FAST") {
            let statement = try db.cachedStatement(sql: "UPDATE subject_keys SET sealed = sealed + ? WHERE tag = ?")
            try statement.execute(arguments: [Int64(count), Data(tag)])
        }
        guard db.changesCount == 1 else {
            throw LogStoreError(.corruptState, "the subject key table holds no row for a subject being sealed")
        }
    }

    func eraseSubjectSecret(tag: [UInt8]) throws -> Int?? {
        guard isOpen else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
        guard
            let row = try Row.fetchOne(db, sql: "SELECT sealed FROM subject_keys WHERE tag = ?", arguments: [Data(tag)])
        else { return nil }
        let sealed: Int64? = row[0]
        // The row's bytes are overwritten with zeros in its page (and freed pages zeroed), not only unlinked.
        try withSecureDelete("ON") {
            try db.execute(sql: "DELETE FROM subject_keys WHERE tag = ?", arguments: [Data(tag)])
        }
        guard db.changesCount > 0 else { return nil }
        return .some(sealed.map { Int($0) })
    }

    /// Runs `body` with `PRAGMA secure_delete` set to `mode`, then off again (the connection's default: the rest
    /// of the log holds nothing an erasure destroys).
    private func withSecureDelete(_ mode: String, _ body: () throws -> Void) throws {
        try db.cachedStatement(sql: "PRAGMA secure_delete = \(mode)").execute()
        defer { try? db.cachedStatement(sql: "PRAGMA secure_delete = OFF").execute() }
        try body()
    }
}
