import AuditChain
import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import AuditStore
import TestKit

@Suite("KeyStore")
struct KeyStoreTests {
    @Test("keys are written 0600 and read back; unsafe modes and missing files are refused with the fix")
    func writeReadRefuse() throws {
        let directory = try TemporaryDirectory()
        let store = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
        let signing = SigningKey.generate()
        try store.write(signing)
        let path = directory.path + "/keys/signing-\(signing.id.hex).key"
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try store.signingKey(id: signing.id).id == signing.id)
        #expect(throws: LogStoreError.self) { try store.write(signing) }  // never overwritten

        chmod(path, 0o640)
        do {
            _ = try store.signingKey(id: signing.id)
            Issue.record("a group-readable key was accepted")
        } catch let error as LogStoreError {
            #expect(error.code == .unsafeKeyPermissions)
            #expect(error.message.contains("chmod 600 \(path)"))
        }
        do {
            _ = try store.dataKey(id: DataKey.generate().id)
            Issue.record("a missing key was found")
        } catch let error as LogStoreError {
            #expect(error.code == .missingKey)
        }
    }

    @Test(
        "a key directory that group or others may write is refused, for reading and writing keys",
        arguments: [0o770, 0o702]
    )
    func sharedKeyDirectory(mode: Int) throws {
        let directory = try TemporaryDirectory()
        let keys = directory.path + "/keys"
        let store = KeyStore(directory: keys, credentialsDirectory: nil)
        let signing = SigningKey.generate()
        try store.write(signing)
        #expect(try FileManager.default.attributesOfItem(atPath: keys)[.posixPermissions] as? Int == 0o700)
        chmod(keys, mode_t(mode))
        for attempt in [{ _ = try store.signingKey(id: signing.id) }, { try store.write(DataKey.generate()) }] {
            let error = #expect(throws: LogStoreError.self) { try attempt() }
            #expect(error?.code == .unsafeKeyPermissions)
            #expect(error?.message.contains("run `chmod 700 \(keys)`") == true, "\(error?.message ?? "")")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys).count == 1, "nothing was written")
        chmod(keys, 0o750)  // readable by the group, as an operator may choose: not writable, so accepted
        #expect(try store.signingKey(id: signing.id).id == signing.id)
    }

    @Test("keys in $CREDENTIALS_DIRECTORY are found first")
    func credentialsDirectory() throws {
        let directory = try TemporaryDirectory()
        let credentials = KeyStore(directory: directory.path + "/credentials", credentialsDirectory: nil)
        let data = DataKey.generate()
        try credentials.write(data)
        let store = KeyStore(directory: directory.path + "/keys", credentialsDirectory: directory.path + "/credentials")
        #expect(try store.dataKey(id: data.id).rawRepresentation == data.rawRepresentation)
        #expect(try store.dataKeysById().keys.sorted { $0.hex < $1.hex } == [data.id])
    }
}

@Suite("SQLiteLogStorage")
struct SQLiteLogStorageTests {
    @Test("the writer connection runs with synchronous = FULL under WAL")
    func durabilitySettings() throws {
        let directory = try TemporaryDirectory()
        let storage = try SQLiteLogStorage(path: directory.path + "/log.sqlite")
        let (synchronous, journal) = try storage.pool.writeWithoutTransaction { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(synchronous == 2)
        #expect(journal == "wal")
    }

    @Test("a new log opens while another connection holds the file (SQLite does not wait for the switch to WAL)")
    func openWaitsForTheWALSwitch() throws {
        // Two processes creating one state directory at once (`auditctl init` and `auditd`, or two `init`s): while
        // one holds the new file, the other's switch to WAL got "database is locked" at once, busy timeout or not.
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        var holder: OpaquePointer?
        #expect(sqlite3_open(path, &holder) == SQLITE_OK)
        #expect(
            sqlite3_exec(holder, "CREATE TABLE other (x); BEGIN IMMEDIATE; INSERT INTO other VALUES (1)", nil, nil, nil)
                == SQLITE_OK
        )
        let connection = UncheckedConnection(holder)
        let released = DispatchSemaphore(value: 0)
        Thread {
            usleep(300_000)
            sqlite3_exec(connection.pointer, "COMMIT", nil, nil, nil)
            sqlite3_close(connection.pointer)
            released.signal()
        }.start()
        let start = ContinuousClock.now
        let storage = try SQLiteLogStorage(path: path)
        // It opened by waiting for the holder to let go (after 300 ms), not by getting around it.
        #expect(ContinuousClock.now - start >= .milliseconds(250))
        #expect(try storage.snapshot().head == nil)
        #expect(released.wait(timeout: .now() + 60) == .success)
    }

    @Test("a schema-1 log (no delivery table) migrates with every entry pending: nothing escapes delivery")
    func migrationFromSchemaOne() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let keys = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
        let log = try await AuditLog.create(storage: SQLiteLogStorage(path: path), keys: keys, deviceId: "d")
        _ = try await log.append([LogFixture.event(1), LogFixture.event(2)])
        // Turn it back into what session 1 wrote: no delivery table, schema version 1.
        let storage = try #require(log.storage as? SQLiteLogStorage)
        try await storage.pool.write { db in
            try db.execute(sql: "DROP TABLE delivery")
            try db.execute(sql: "UPDATE metadata SET value = '1' WHERE key = 'schemaVersion'")
        }
        let reopened = try SQLiteLogStorage(path: path)
        let table = try reopened.deliveryTable()
        #expect(table.items(in: .pending).map(\.seq) == [0, 1, 2])
        #expect(table.items[0]?.priority == .pinned)
        #expect(table.items[1]?.priority == .critical && table.items[2]?.priority == .critical)
        let stored = try reopened.entries(from: 1, through: 1, limit: 1).first
        #expect(table.items[1]?.hash == (try SealedEntry(serialized: try #require(stored).bytes)).entryHash)
        #expect(try reopened.snapshot().metadata["schemaVersion"] == String(SQLiteLogStorage.schemaVersion))
    }

    @Test("appends persist across reopening, and an entry that does not continue the head is refused")
    func persistenceAndContinuity() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let keys = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
        let log = try await AuditLog.create(storage: SQLiteLogStorage(path: path), keys: keys, deviceId: "d")
        _ = try await log.append([LogFixture.event(1), LogFixture.event(2)])
        let reopened = try AuditLog(storage: SQLiteLogStorage(path: path), keys: keys)
        #expect(try reopened.info().head.seq == 2)
        #expect(try LogFixture.verify(reopened).isClean)

        let stale = try SealedEntry(
            serialized: try #require(try reopened.storage.entries(from: 1, through: 1, limit: 1).first).bytes
        )
        await #expect(throws: LogStoreError.self) {
            try await reopened.storage.append { _ in (LogAppend(entries: [stale]), ()) }
        }
        #expect(try reopened.storage.size().count == 3)
    }
}

/// A raw SQLite connection handed to the thread that closes it.
private struct UncheckedConnection: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ pointer: OpaquePointer?) { self.pointer = pointer }
}
