import AuditChain
import Foundation
import GRDB
import GRDBSQLite

/// The idempotency index beside the entries: one row per event entry, its idempotency tag (``IdempotencyTag``)
/// and whether the event's `occurredAt` was stamped at ingest (``IdempotencyHolder``), written in the same
/// transaction as the entry.
extension SQLiteLogStorage {
    /// Creates the index (schema version 3), and its `stamped` column (version 4). Entries written before the
    /// index have no row: their retries are not recognised (their keys are sealed encrypted, and the storage holds
    /// no key to read them). Rows written before the column say 0 (not stamped): a retry of their events is
    /// compared byte for byte, as it was when they were written.
    ///
    /// The row of an entry is deleted with it by a trigger, whatever deletes it (retention, or anyone else): the
    /// index is bounded by the log, and a tag never points at an entry that is gone.
    static func migrateIdempotency(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS idempotency (
                    seq INTEGER PRIMARY KEY,
                    tag BLOB NOT NULL,
                    stamped INTEGER NOT NULL DEFAULT 0
                );
                CREATE UNIQUE INDEX IF NOT EXISTS idempotency_tag ON idempotency (tag);
                CREATE TRIGGER IF NOT EXISTS idempotency_leaves_with_entry AFTER DELETE ON entries
                BEGIN
                    DELETE FROM idempotency WHERE seq = old.seq;
                END;
                """
        )
        if try !db.columns(in: "idempotency").contains(where: { $0.name == "stamped" }) {
            try db.execute(sql: "ALTER TABLE idempotency ADD COLUMN stamped INTEGER NOT NULL DEFAULT 0")
        }
    }
}

extension SQLiteLogStorage.EntryWriter {
    // SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY, macros Swift does not import.
    private static let uniqueViolation = SQLITE_CONSTRAINT | (8 << 8)
    private static let primaryKeyViolation = SQLITE_CONSTRAINT | (6 << 8)

    func claim(_ tag: IdempotencyTag, for seq: UInt64, occurredAtStamped: Bool) throws -> IdempotencyHolder? {
        guard isOpen else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
        guard let key = Int64(exactly: seq), seq >= firstSeq else {
            throw LogStoreError(.invalidInput, "seq \(seq) is not one this transaction writes")
        }
        let insert = insertClaim
        for _ in 0..<2 {
            // Bound with SQLITE_STATIC: the tag's buffer outlives the step, which runs inside this closure.
            let code = tag.bytes.withUnsafeBytes { bytes in
                step(insert) { statement in
                    sqlite3_bind_int64(statement, 1, key)
                    sqlite3_bind_blob(statement, 2, bytes.baseAddress, Int32(bytes.count), nil)
                    sqlite3_bind_int(statement, 3, occurredAtStamped ? 1 : 0)
                }
            }
            switch code {
            case nil:
                claimedThrough = max(claimedThrough ?? 0, seq)
                return nil
            case Self.uniqueViolation:
                let holder = try holder(of: tag)
                // Held by this transaction's claims, or by an entry of the log: a retry, or a conflict.
                if try holder.seq >= firstSeq || storedEntry(at: holder.seq) != nil { return holder }
                // A row whose entry is gone (deleted without the trigger): the tag is free again.
                try db.execute(
                    sql: "DELETE FROM idempotency WHERE seq = ?",
                    arguments: [Int64(clamping: holder.seq)]
                )
            case Self.primaryKeyViolation:
                throw LogStoreError(
                    .corruptState,
                    "cannot claim an idempotency tag for entry \(seq): the index already holds a row for that "
                        + "sequence number, so entries after the log's newest one were removed behind its back; run "
                        + "`auditctl verify`"
                )
            case let other?:
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                throw LogStoreError(.storage, "cannot claim an idempotency tag: SQLite error \(other): \(message)")
            }
        }
        throw LogStoreError(.storage, "cannot claim an idempotency tag: its row could not be replaced")
    }

    func releaseClaims(from seq: UInt64) throws {
        guard isOpen else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
        try db.cachedStatement(sql: "DELETE FROM idempotency WHERE seq >= ?").execute(arguments: [
            Int64(clamping: max(seq, firstSeq))
        ])
        if let claimed = claimedThrough, claimed >= seq { claimedThrough = seq > firstSeq ? seq - 1 : nil }
    }

    func storedEntry(at seq: UInt64) throws -> StoredEntry? {
        guard let key = Int64(exactly: seq) else { return nil }
        let statement = try db.cachedStatement(sql: "SELECT bytes FROM entries WHERE seq = ?")
        return try Data.fetchOne(statement, arguments: [key]).map { StoredEntry(seq: seq, bytes: Array($0)) }
    }

    /// The row holding `tag`.
    private func holder(of tag: IdempotencyTag) throws -> IdempotencyHolder {
        let statement = try db.cachedStatement(sql: "SELECT seq, stamped FROM idempotency WHERE tag = ?")
        guard let row = try Row.fetchOne(statement, arguments: [Data(tag.bytes)]),
            let seq = row[0] as Int64?, seq >= 0, let stamped = row[1] as Int64?
        else {
            throw LogStoreError(.storage, "the idempotency index refused a tag that it does not hold")
        }
        return IdempotencyHolder(seq: UInt64(seq), occurredAtStamped: stamped != 0)
    }

    /// Binds, steps once and resets `statement`; nil when it ran, else SQLite's extended error code.
    private func step(_ statement: Statement, bind: (OpaquePointer) -> Void) -> Int32? {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        bind(handle)
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return code == SQLITE_DONE ? nil : sqlite3_extended_errcode(db.sqliteConnection)
    }
}
