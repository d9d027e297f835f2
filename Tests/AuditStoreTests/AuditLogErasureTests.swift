import AuditChain
import Crypto
@testable import AuditStore
import Foundation
import GRDB
import Testing
import TestKit

/// Per-subject content keys, erasure and legal holds on a real log (docs/FORMAT.md, section 13.9).
@Suite("AuditLog erasure")
struct AuditLogErasureTests {
    static let alice = "alice-canary-5d1c9e"
    static let bob = "bob-canary-77a0f2"
    static let aliceMarker = "MARKER-A-0f9d2c81e4"
    static let bobMarker = "MARKER-B-6b3a90d5c7"

    /// An event of `user` carrying `marker`, number `index`.
    static func event(_ user: String, _ marker: String, _ index: Int) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_DISABLED",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(index)),
            userId: user,
            deviceId: "device",
            attributes: ["reason": .string("\(marker) \(index)")],
            idempotencyKey: "\(user)-\(index)"
        )
    }

    /// A format version 2 log with subject keys on a fresh storage of `kind`.
    static func log(_ kind: LogFixture.Kind, in directory: TemporaryDirectory) async throws -> AuditLog {
        var configuration = AuditLog.Configuration()
        configuration.formatVersion = FormatConstants.version2
        configuration.subjectKeys = true
        return try await AuditLog.create(
            storage: LogFixture.storage(kind, in: directory),
            keys: LogFixture.keys(directory),
            deviceId: "device",
            configuration: configuration
        )
    }

    /// Verifies the stored log with the genesis key pinned and the given keys.
    static func verify(
        _ log: AuditLog,
        genesisKey: Curve25519.Signing.PublicKey,
        keys: [DataKey]
    ) throws
        -> VerificationReport
    {
        var options = ChainVerifier.Options(trustedKeys: [genesisKey])
        options.dataKeys = keys
        var verifier = ChainVerifier(options: options)
        try log.storage.forEachEntry { entry in
            verifier.consume(entry.bytes, storageSeq: entry.seq)
            return true
        }
        return verifier.finish()
    }

    /// Every key that reads the log: data keys and the content keys of the subjects still in the table.
    static func readingKeys(_ log: AuditLog) throws -> [DataKey] {
        try log.keys.allDataKeys() + AuditLog.subjectContentKeys(storage: log.storage, keys: log.keys)
    }

    @Test(
        "events with a user id are sealed under their subject's key; erasing one subject leaves the other readable",
        arguments: LogFixture.Kind.allCases
    )
    func eraseOneSubject(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(kind, in: directory)
        let genesisKey = try log.activeSigningKey().publicKey
        let events = (0..<6).map { Self.event($0 % 2 == 0 ? Self.alice : Self.bob, $0 % 2 == 0 ? "a" : "b", $0) }
        _ = try await log.append(events)
        let dataKeyIds = Set(try log.keys.allDataKeys().map(\.id))
        var subjectIds: [String: Set<KeyID>] = [:]
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            if entry.header.kind == .event {
                #expect(entry.header.isSubjectSealed)
                #expect(!dataKeyIds.contains(entry.header.dataKeyId))
                subjectIds[entry.header.seq % 2 == 1 ? Self.alice : Self.bob, default: []].insert(
                    entry.header.dataKeyId
                )
            }
            return true
        }
        #expect(subjectIds[Self.alice]?.count == 1 && subjectIds[Self.alice] != subjectIds[Self.bob])
        let before = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(before.isClean && before.payloadsOpened == 6, "\(before.problems)")

        let erasure = try await log.erase(userId: Self.alice, reason: "art. 17 request 42", requestedBy: "dpo")
        #expect(erasure.entriesErased == 3)
        #expect(Set(erasure.keyIds) == subjectIds[Self.alice])
        let after = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(after.isClean, "\(after.problems)")
        #expect(after.payloadsOpened == 3)
        #expect(after.erasures.map(\.entriesErased) == [3])
        #expect(after.erasures.first?.recordSeq == erasure.recordSeq)
        // Without any key the verifier still counts the erased entries.
        let keyless = try Self.verify(log, genesisKey: genesisKey, keys: [])
        #expect(keyless.isClean && keyless.erasures.map(\.entriesErased) == [3])
        // The subject is gone: a second erasure has nothing to destroy; a new event of hers gets a new key.
        await #expect(throws: LogStoreError.self) {
            _ = try await log.erase(userId: Self.alice, reason: "again", requestedBy: "")
        }
        _ = try await log.append([Self.event(Self.alice, "a", 10)])
        let later = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(later.isClean && later.payloadsOpened == 4, "\(later.problems)")
    }

    @Test("after an erasure no byte of the subject's user id, marker, secret, row or keys is in the state directory")
    func canaryOnTheDevice() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(.sqlite, in: directory)
        let genesisKey = try log.activeSigningKey().publicKey
        for index in 0..<40 {
            _ = try await log.append([
                Self.event(Self.alice, Self.aliceMarker, index), Self.event(Self.bob, Self.bobMarker, index),
            ])
        }
        let master = try #require(try log.keys.subjectMasterKey(create: false, randomBytes: { _ in [] }))
        let aliceTag = master.tag(userId: Self.alice)
        let aliceRow = try #require(try log.storage.subjectSecrets().first { $0.tag == aliceTag })
        let aliceSecret = try master.unwrap(aliceRow.wrapped, tag: aliceTag)
        let aliceKeys = try log.keys.allDataKeys().map { SubjectKey.contentKey(secret: aliceSecret, dataKey: $0) }

        // The canary is alive before: the row's bytes are in the database's files.
        #expect(AuditLogEpochTests.allBytes(under: directory.path).contains { $0.contains(aliceRow.wrapped) })
        let erasure = try await log.erase(userId: Self.alice, reason: "request 7", requestedBy: "")
        #expect(erasure.entriesErased == 40)
        let needles: [(String, [UInt8])] =
            [
                ("user id", Array(Self.alice.utf8)), ("marker", Array(Self.aliceMarker.utf8)),
                ("secret", aliceSecret), ("tag", aliceTag), ("wrapped row", aliceRow.wrapped),
            ] + aliceKeys.map { ("content key", $0.rawRepresentation) }
        for bytes in AuditLogEpochTests.allBytes(under: directory.path) {
            for (what, needle) in needles {
                #expect(!bytes.contains(needle), "the erased subject's \(what) is still in a file")
            }
        }
        let report = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(report.isClean && report.payloadsOpened == 40, "\(report.problems)")
        #expect(report.erasures.map(\.entriesErased) == [40])
    }

    @Test(
        "a retry of a subject-sealed event is a duplicate, in this process and another; not after an erasure",
        arguments: LogFixture.Kind.allCases
    )
    func retryOfASubjectSealedEvent(kind: LogFixture.Kind) async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(kind, in: directory)
        let first = try await log.append([Self.event(Self.alice, "a", 0)])
        let again = try await log.append([Self.event(Self.alice, "a", 0)])
        #expect(again.map(\.seq) == first.map(\.seq) && again.allSatisfy(\.isDuplicate))
        // Another process (a fresh open, nothing cached) reads the secret from the key table.
        if kind == .sqlite {
            let reopened = try AuditLog(
                storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
                keys: LogFixture.keys(directory)
            )
            let retried = try await reopened.append([Self.event(Self.alice, "a", 0)])
            #expect(retried.map(\.seq) == first.map(\.seq) && retried.allSatisfy(\.isDuplicate))
        }
        // Another event under the same key is refused as such.
        var other = Self.event(Self.alice, "a", 0)
        other.attributes["reason"] = .string("changed")
        await #expect(throws: (any Error).self) { try await log.append([other]) }
        _ = try await log.erase(userId: Self.alice, reason: "request", requestedBy: "test")
        await #expect(throws: (any Error).self) { try await log.append([Self.event(Self.alice, "a", 0)]) }
    }

    @Test("a legal hold refuses erasure, naming its seq; cleared, the erasure goes through; all three are recorded")
    func legalHold() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(.sqlite, in: directory)
        let genesisKey = try log.activeSigningKey().publicKey
        _ = try await log.append([Self.event(Self.alice, "a", 0), Self.event(Self.bob, "b", 1)])
        let hold = try await log.setHold(reason: "litigation 2026-17")
        #expect(try log.activeHold() == hold.header.seq)
        await #expect(throws: LogStoreError.self) { _ = try await log.setHold(reason: "second") }
        do {
            _ = try await log.erase(userId: Self.alice, reason: "request", requestedBy: "")
            Issue.record("an erasure under a hold went through")
        } catch let error as LogStoreError {
            #expect(error.code == .held)
            #expect(error.description.contains("seq \(hold.header.seq)") && error.description.contains("litigation"))
        }
        // Refused means nothing happened: her events still open.
        let held = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(
            held.isClean && held.payloadsOpened == 2 && held.erasures.isEmpty && held.activeHoldSeq == hold.header.seq
        )

        let clear = try await log.clearHold(reason: "settled")
        await #expect(throws: LogStoreError.self) { _ = try await log.clearHold(reason: "none in force") }
        let erasure = try await log.erase(userId: Self.alice, reason: "request", requestedBy: "")
        #expect(erasure.recordSeq > clear.header.seq)
        let report = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(report.isClean, "\(report.problems)")
        #expect(report.activeHoldSeq == nil && report.erasures.map(\.entriesErased) == [1])
        let kinds = try log.storage.entries(from: 0, through: .max, limit: 100).compactMap {
            SealedEntry.kindIfWellFormed($0.bytes)
        }
        #expect(kinds.filter { $0 == .legalHold }.count == 2 && kinds.filter { $0 == .erasure }.count == 1)
    }

    @Test("an export record is named by the erasure that follows it: erasure cannot reach the exported copy")
    func exportNamedByErasure() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(.memory, in: directory)
        _ = try await log.append([Self.event(Self.alice, "a", 0)])
        let (record, keys) = try await log.exportSubjectKeys(userId: Self.alice, reason: "police case 9")
        let erasure = try await log.erase(userId: Self.alice, reason: "request", requestedBy: "")
        #expect(erasure.exportSeqs == [record.header.seq])
        #expect(Set(keys.map(\.id)) == Set(erasure.keyIds))
        await #expect(throws: LogStoreError.self) {
            _ = try await log.exportSubjectKeys(userId: "nobody", reason: "x")
        }
    }

    @Test("keys evolve with the data key: an erasure after a rotation lists both generations and erases every event")
    func erasureAcrossDataKeys() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(.sqlite, in: directory)
        let genesisKey = try log.activeSigningKey().publicKey
        _ = try await log.append([Self.event(Self.alice, "a", 0), Self.event(Self.bob, "b", 1)])
        _ = try await log.rotateKeys(reason: "new data key")
        _ = try await log.append([Self.event(Self.alice, "a", 2), Self.event(Self.bob, "b", 3)])
        #expect(try log.keys.allDataKeys().count == 2)
        let erasure = try await log.erase(userId: Self.alice, reason: "request", requestedBy: "")
        #expect(erasure.keyIds.count == 2 && erasure.entriesErased == 2)
        let report = try Self.verify(log, genesisKey: genesisKey, keys: try Self.readingKeys(log))
        #expect(report.isClean && report.payloadsOpened == 2, "\(report.problems)")
    }

    @Test("another process's erasure: a writer that cached the subject's secret does not seal under the erased key")
    func erasureByAnotherWriter() async throws {
        let directory = try TemporaryDirectory()
        let first = try await Self.log(.sqlite, in: directory)
        let genesisKey = try first.activeSigningKey().publicKey
        _ = try await first.append([Self.event(Self.alice, "a", 0)])
        let second = try AuditLog(
            storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
            keys: LogFixture.keys(directory)
        )
        _ = try await second.erase(userId: Self.alice, reason: "request", requestedBy: "")
        _ = try await first.append([Self.event(Self.alice, "a", 1)])
        let report = try Self.verify(first, genesisKey: genesisKey, keys: try Self.readingKeys(first))
        #expect(report.isClean && report.payloadsOpened == 1, "\(report.problems)")
        #expect(report.erasures.map(\.entriesErased) == [1])
    }

    /// The `sealed` count of the key table row of `user`, read directly (nil: NULL; no row: a failed require).
    static func sealedCount(_ user: String, log: AuditLog, path: String) throws -> Int64? {
        let master = try #require(try log.keys.subjectMasterKey(create: false, randomBytes: { _ in [] }))
        let tag = Data(master.tag(userId: user))
        let row = try SQLiteLogStorage(path: path).pool.read { db in
            try Row.fetchOne(db, sql: "SELECT sealed FROM subject_keys WHERE tag = ?", arguments: [tag])
        }
        let found = try #require(row)
        return found[0]
    }

    @Test("the erasure's count is the key table row's, kept by every process that sealed under the subject")
    func countKeptByEveryWriter() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let first = try await Self.log(.sqlite, in: directory)
        let genesisKey = try first.activeSigningKey().publicKey
        let second = try AuditLog(storage: SQLiteLogStorage(path: path), keys: LogFixture.keys(directory))
        _ = try await first.append([Self.event(Self.alice, "a", 0), Self.event(Self.alice, "a", 1)])
        _ = try await second.append([Self.event(Self.alice, "a", 2), Self.event(Self.bob, "b", 3)])
        _ = try await first.append([Self.event(Self.bob, "b", 4)])
        _ = try await second.append([Self.event(Self.alice, "a", 5)])
        #expect(try Self.sealedCount(Self.alice, log: first, path: path) == 4)
        #expect(try Self.sealedCount(Self.bob, log: first, path: path) == 2)
        let erasure = try await first.erase(userId: Self.alice, reason: "request", requestedBy: "")
        #expect(erasure.entriesErased == 4)
        let report = try Self.verify(first, genesisKey: genesisKey, keys: try Self.readingKeys(first))
        #expect(report.isClean && report.erasures.map(\.entriesErased) == [4], "\(report.problems)")
        #expect(try Self.sealedCount(Self.bob, log: second, path: path) == 2)
        // The erasure's export records (and `log`'s erasure records) are found through the partial index.
        for kind in [RecordKind.erasure, .subjectKeyExport] {
            let plan = try await SQLiteLogStorage(path: path).pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteLogStorage.entriesOfKindSQL(kind))
                    .map { row -> String in row["detail"] }.joined(separator: "; ")
            }
            #expect(plan.contains("entries_subject_records"), "\(plan)")
        }
    }

    @Test("a row made before rows counted their events (schema version 5) is counted by reading the log")
    func rowWithoutCount() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let log = try await Self.log(.sqlite, in: directory)
        _ = try await log.append([Self.event(Self.alice, "a", 0), Self.event(Self.bob, "b", 1)])
        _ = try await log.append([Self.event(Self.alice, "a", 2)])
        // The database as schema version 5 left it: no `sealed` column, no index of subject records.
        try await SQLiteLogStorage(path: path).pool.write { db in
            try db.execute(sql: "DROP INDEX entries_subject_records")
            try db.execute(sql: "ALTER TABLE subject_keys DROP COLUMN sealed")
            try db.execute(sql: "UPDATE metadata SET value = '5' WHERE key = 'schemaVersion'")
        }
        let reopened = try AuditLog(storage: SQLiteLogStorage(path: path), keys: LogFixture.keys(directory))
        #expect(try Self.sealedCount(Self.alice, log: reopened, path: path) == nil)
        _ = try await reopened.append([Self.event(Self.alice, "a", 3)])
        #expect(try Self.sealedCount(Self.alice, log: reopened, path: path) == nil)
        let erasure = try await reopened.erase(userId: Self.alice, reason: "request", requestedBy: "")
        #expect(erasure.entriesErased == 3)
        // A subject seen after the erasure gets a new row, which counts.
        _ = try await reopened.append([Self.event(Self.alice, "a", 4)])
        #expect(try Self.sealedCount(Self.alice, log: reopened, path: path) == 1)
    }
}
