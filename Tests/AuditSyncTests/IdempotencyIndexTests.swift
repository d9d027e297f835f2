import AuditChain
@testable import AuditStore
@testable import AuditWire
import Foundation
import GRDB
import Testing
import AuditSync
import TestKit

/// The idempotency index as stored: keyed tags only, bounded by the log, migrated into older logs, tied to its
/// secret.
@Suite("IdempotencyIndex")
struct IdempotencyIndexTests {
    typealias Kind = LogFixture.Kind

    /// Rows of the SQLite index.
    static func rows(_ log: AuditLog) throws -> [(seq: Int64, tag: [UInt8])] {
        let storage = try #require(log.storage as? SQLiteLogStorage)
        return try storage.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT seq, tag FROM idempotency ORDER BY seq").map {
                ($0[0], Array($0[1] as Data))
            }
        }
    }

    @Test("retention takes an entry's index row with it: the table stays bounded by the log", arguments: Kind.allCases)
    func retentionRemovesRows(kind: Kind) async throws {
        var policy = DeliveryPolicy()
        policy.retention = .seconds(3600)
        let fixture = try await DeliveryFixture(policy: policy, sqlite: kind == .sqlite)
        let old = try await fixture.log.append((0..<3).map { LogFixture.event(key: "old-\($0)") })
        try await fixture.engine.cycle()
        fixture.clocks.advance(.seconds(2 * 3600))
        _ = try await fixture.log.append([LogFixture.event(key: "young")])
        let report = try await fixture.engine.cycle()
        #expect(report.pruned == 3)
        if kind == .sqlite {
            #expect(try Self.rows(fixture.log).map(\.seq) == [4])
        }
        // The pruned entry's key is free again (de-duplication lasts as long as the entry is in the log); the
        // young one still answers its original seq.
        let again = try await fixture.log.append([LogFixture.event(key: "old-0")])
        #expect(!again[0].isDuplicate && again[0].seq != old[0].seq)
        #expect(try await fixture.log.append([LogFixture.event(key: "young")]).map(\.seq) == [4])
    }

    @Test("the database holds no idempotency key in clear, only 16-byte keyed tags")
    func noKeyInClear() async throws {
        let directory = try TemporaryDirectory()
        let log = try await LogFixture.log(.sqlite, in: directory)
        let key = "recognisable-idempotency-key-0042"
        _ = try await log.append([LogFixture.event(key: key)])
        let rows = try Self.rows(log)
        #expect(rows.count == 1 && rows[0].tag.count == IdempotencyTag.size)
        let secret = try #require(try log.keys.idempotencySecret())
        #expect(rows[0].tag == secret.tag(key).bytes)
        for suffix in ["", "-wal"] {
            let bytes = Array(FileManager.default.contents(atPath: directory.path + "/log.sqlite" + suffix) ?? Data())
            let needle = Array(key.utf8)
            let found =
                bytes.count >= needle.count
                && (0...(bytes.count - needle.count)).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
            #expect(!found, "the key is in log.sqlite\(suffix)")
        }
    }

    @Test("tags are keyed by the log's secret: another secret gives another tag for the same key")
    func tagsAreKeyed() throws {
        let one = try IdempotencySecret(rawRepresentation: Array(repeating: 1, count: 32))
        let two = try IdempotencySecret(rawRepresentation: Array(repeating: 2, count: 32))
        #expect(one.tag("k") == one.tag("k"))
        #expect(one.tag("k") != two.tag("k"))
        #expect(one.tag("k") != one.tag("k2"))
        #expect(one.id != two.id)
        #expect(throws: LogStoreError.self) { try IdempotencySecret(rawRepresentation: [1, 2, 3]) }
    }

    @Test("a version-2 log is migrated: its old entries have no row, new ones are de-duplicated")
    func migratesVersion2() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        do {
            let log = try await LogFixture.log(.sqlite, in: directory)
            _ = try await log.append([LogFixture.event(key: "before")])
            // Back to what version 2 wrote: no index, no secret.
            let storage = try #require(log.storage as? SQLiteLogStorage)
            try await storage.pool.write { db in
                try db.execute(
                    sql: """
                        DROP TRIGGER idempotency_leaves_with_entry; DROP TABLE idempotency;
                        UPDATE metadata SET value = '2' WHERE key = 'schemaVersion';
                        DELETE FROM metadata WHERE key = 'idempotencySecretId';
                        """
                )
            }
            try FileManager.default.removeItem(atPath: directory.path + "/keys/idempotency.key")
        }
        let log = try AuditLog(storage: SQLiteLogStorage(path: path), keys: LogFixture.keys(directory))
        #expect(try log.storage.snapshot().metadata["schemaVersion"] == String(SQLiteLogStorage.schemaVersion))
        #expect(try await log.append([LogFixture.event(key: "after")]).map(\.seq) == [2])
        #expect(try await log.append([LogFixture.event(key: "after")]).map(\.isDuplicate) == [true])
        #expect(try Self.rows(log).map(\.seq) == [2])
    }

    @Test("a version-3 log is migrated: its rows are kept and say not stamped; new rows say whether they are")
    func migratesVersion3() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let stamped = { (key: String, stamp: Int64) -> ProducerEvent in
            var event = LogFixture.event(key: key)
            event.occurredAt = AuditTimestamp(millisecondsSinceEpoch: stamp)
            return ProducerEvent(event, occurredAtStamped: true)
        }
        do {
            let log = try await LogFixture.log(.sqlite, in: directory)
            _ = try await log.append([
                stamped("before", 1_795_000_000_000), ProducerEvent(LogFixture.event(key: "explicit")),
            ])
            // Back to what version 3 wrote: the index without its `stamped` column.
            let storage = try #require(log.storage as? SQLiteLogStorage)
            try await storage.pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE old_index (seq INTEGER PRIMARY KEY, tag BLOB NOT NULL);
                        INSERT INTO old_index SELECT seq, tag FROM idempotency;
                        DROP TRIGGER idempotency_leaves_with_entry; DROP TABLE idempotency;
                        ALTER TABLE old_index RENAME TO idempotency;
                        CREATE UNIQUE INDEX idempotency_tag ON idempotency (tag);
                        CREATE TRIGGER idempotency_leaves_with_entry AFTER DELETE ON entries
                        BEGIN DELETE FROM idempotency WHERE seq = old.seq; END;
                        UPDATE metadata SET value = '3' WHERE key = 'schemaVersion';
                        """
                )
            }
        }
        let log = try AuditLog(storage: SQLiteLogStorage(path: path), keys: LogFixture.keys(directory))
        #expect(try log.storage.snapshot().metadata["schemaVersion"] == String(SQLiteLogStorage.schemaVersion))
        let storage = try #require(log.storage as? SQLiteLogStorage)
        let flags = {
            try storage.pool.read { db in try Int64.fetchAll(db, sql: "SELECT stamped FROM idempotency ORDER BY seq") }
        }
        #expect(try flags() == [0, 0])
        // The old rows: retries compared byte for byte, as when they were written.
        #expect(try await log.append([stamped("before", 1_795_000_000_000)]).map(\.isDuplicate) == [true])
        #expect(try await log.append([LogFixture.event(key: "explicit")]).map(\.isDuplicate) == [true])
        await #expect(throws: IdempotencyConflict.self) {
            try await log.append([stamped("before", 1_795_000_000_001)])
        }
        // A new row says it was stamped, and its retry with another stamp is the original.
        #expect(try await log.append([stamped("after", 1_795_000_000_000)]).map(\.seq) == [3])
        #expect(try flags() == [0, 0, 1])
        #expect(try await log.append([stamped("after", 1_795_000_000_002)]).map(\.seq) == [3])
        #expect(try Self.rows(log).map(\.seq) == [1, 2, 3])
    }

    @Test("a log whose secret is lost or replaced refuses appends rather than forget its keys; the secret is 0600")
    func secretIsKept() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/keys/idempotency.key"
        let log = try await LogFixture.log(.sqlite, in: directory)
        _ = try await log.append([LogFixture.event(key: "k")])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let original = try #require(FileManager.default.contents(atPath: path))
        try FileManager.default.removeItem(atPath: path)
        func reopen() throws -> AuditLog {
            try AuditLog(
                storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
                keys: LogFixture.keys(directory)
            )
        }
        let missing = await #expect(throws: LogStoreError.self) {
            try await reopen().append([LogFixture.event(key: "k")])
        }
        #expect(missing?.code == .missingKey)
        try PrivateFile.create(path, bytes: Array(repeating: 7, count: 32))
        let replaced = await #expect(throws: LogStoreError.self) {
            try await reopen().append([LogFixture.event(key: "k")])
        }
        #expect(replaced?.code == .invalidKey)
        try FileManager.default.removeItem(atPath: path)
        try PrivateFile.create(path, bytes: Array(original))
        #expect(try await reopen().append([LogFixture.event(key: "k")]).map(\.isDuplicate) == [true])
        #expect(try log.info().head.seq == 1)
    }
}
