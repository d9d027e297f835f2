public import AuditChain
import Foundation
import GRDB
import GRDBSQLite

/// The subject key table (docs/FORMAT.md, section 13.9): one row per subject, its tag and its secret wrapped under
/// the log's subject master key. An erasure deletes the row with `secure_delete` in the transaction that seals the
/// erasure record, then a truncating checkpoint leaves no copy in the WAL.
extension SQLiteLogStorage {
    /// Creates the table (schema version 5).
    static func migrateSubjects(_ db: Database) throws {
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS subject_keys (tag BLOB PRIMARY KEY, wrapped BLOB NOT NULL) WITHOUT ROWID"
        )
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
    /// the bytes).
    public func entries(ofKind kind: RecordKind) throws -> [StoredEntry] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT seq, bytes FROM entries WHERE kind = ? ORDER BY seq",
                arguments: [
                    Int(kind.rawValue)
                ]
            ).map { row in
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
        try db.execute(
            sql: "INSERT INTO subject_keys (tag, wrapped) VALUES (?, ?)",
            arguments: [Data(tag), Data(wrapped)]
        )
    }

    func eraseSubjectSecret(tag: [UInt8]) throws -> Bool {
        guard isOpen else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
        // The row's bytes are overwritten with zeros in its page (and freed pages zeroed), not only unlinked.
        try db.execute(sql: "PRAGMA secure_delete = ON")
        defer { try? db.execute(sql: "PRAGMA secure_delete = OFF") }
        try db.execute(sql: "DELETE FROM subject_keys WHERE tag = ?", arguments: [Data(tag)])
        return db.changesCount > 0
    }
}
