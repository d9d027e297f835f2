import AuditChain
@testable import AuditStore
@testable import AuditSync
import AuditWire
import Foundation
import GRDB
import Testing
import TestKit

/// Appending to a log whose file was changed behind its back. A log whose newest entries were removed must not hand
/// their sequence numbers to new entries (the collector may hold the removed ones, and a reused number is a fork);
/// a newest entry that this device did not sign must not be chained from (the link would vouch for a forgery).
@Suite("Appending to a log altered behind its back")
struct TamperedHeadTests {
    let directory: TemporaryDirectory
    let path: String
    let keys: KeyStore

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/log.sqlite"
        keys = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
    }

    /// A log of genesis, events 1–3, the checkpoint at 4 and events 5–6.
    func makeLog() async throws -> AuditLog {
        let log = try await AuditLog.create(storage: SQLiteLogStorage(path: path), keys: keys, deviceId: "d")
        _ = try await log.append((1...3).map(LogFixture.event))
        #expect(try await log.writeCheckpoint().seq == 4)
        _ = try await log.append((5...6).map(LogFixture.event))
        return log
    }

    /// A connection of the test's own, as another process would open one: it waits for the log's connections
    /// (the background checkpointer may hold the file for a moment) instead of failing at once.
    func connection() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Changes the file with SQL, as someone with write access to it would, and opens the log again.
    func tamper(_ sql: String) async throws -> AuditLog {
        let queue = try connection()
        try await queue.write { try $0.execute(sql: sql) }
        try queue.close()
        return try AuditLog(storage: SQLiteLogStorage(path: path), keys: keys)
    }

    /// Makes the log, changes its file with `sql`, and returns the log and the error of one refused append.
    func refusedAppend(after sql: String) async throws -> (AuditLog, LogStoreError?) {
        _ = try await makeLog()
        let log = try await tamper(sql)
        return (log, await refusedAppend(to: log))
    }

    /// SQL that changes the first byte of entry `seq`'s stored payload digest (byte 120, which the entry hash and so
    /// the signature cover) to another value.
    static func alterDigest(seq: UInt64) -> String {
        "UPDATE entries SET bytes = substr(bytes, 1, 120) || CASE WHEN substr(bytes, 121, 1) = x'ff' THEN x'00' "
            + "ELSE x'ff' END || substr(bytes, 122) WHERE seq = \(seq)"
    }

    /// The error of one append to `log`, which must refuse it as corrupt state.
    func refusedAppend(to log: AuditLog) async -> LogStoreError? {
        let error = await #expect(throws: LogStoreError.self) { _ = try await log.append([LogFixture.event(9)]) }
        #expect(error?.code == .corruptState)
        return error
    }

    func count(_ table: String) async throws -> Int {
        let queue = try connection()
        defer { try? queue.close() }
        return try await queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(table)") ?? -1 }
    }

    @Test("with the queue's rows gone too, appends, checkpoints and rotations are refused and write nothing")
    func cutBeforeTheLastCheckpoint() async throws {
        _ = try await makeLog()
        let log = try await tamper("DELETE FROM entries WHERE seq >= 3; DELETE FROM delivery WHERE seq >= 3")
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: keys.directory).sorted()
        // A signing key, a data key and the idempotency secret of the events appended.
        #expect(keyFiles.count == 3)

        // Before this was refused, sealing after seq 2 trapped on the checkpoint interval (2 + 1 - 4).
        let refused = "the log ends at seq 2, but it reached seq 4 (its last checkpoint)"
        let append = await #expect(throws: LogStoreError.self) { _ = try await log.append([LogFixture.event(9)]) }
        #expect(append?.code == .corruptState)
        #expect(append?.message.hasPrefix(refused) == true, "\(append?.message ?? "")")
        let checkpoint = await #expect(throws: LogStoreError.self) { _ = try await log.writeCheckpoint() }
        #expect(checkpoint?.message.hasPrefix(refused) == true)
        let rotation = await #expect(throws: LogStoreError.self) { _ = try await log.rotateKeys(reason: "test") }
        #expect(rotation?.message.hasPrefix(refused) == true)
        let check = #expect(throws: LogStoreError.self) { try log.checkAppendable() }
        #expect(check?.message.hasPrefix(refused) == true)

        #expect(try log.info().head.seq == 2)
        #expect(try await count("entries") == 3)
        #expect(try await count("delivery") == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys.directory).sorted() == keyFiles)

        // Reading still works, and the checkpoint the log stored shows the cut.
        var options = ChainVerifier.Options(trustedKeys: try keys.allSigningKeys().map(\.publicKey))
        options.trustedCheckpoint = try log.latestCheckpoint()
        let report = try log.storage.verify(options: options)
        #expect(report.problems.map { "\($0.seq)-\($0.lastSeq):\($0.kind)" } == ["3-4:truncated"])
    }

    @Test("a log that refuses to seal still delivers the entries it holds: damage at the head does not stop them")
    func deliveryGoesOn() async throws {
        _ = try await makeLog()
        let log = try await tamper("DELETE FROM entries WHERE seq >= 3; DELETE FROM delivery WHERE seq >= 3")
        #expect(throws: LogStoreError.self) { try log.checkAppendable() }
        let transport = ScriptedTransport()
        let engine = try SyncEngine(log: log, transport: transport)
        let report = try await engine.cycle()
        #expect(report.delivered == 3, "\(report)")
        #expect(transport.delivered.keys.sorted() == [0, 1, 2])
        #expect(try log.storage.deliveryTable().count(.pending) == 0)
        await #expect(throws: LogStoreError.self) { _ = try await log.append([LogFixture.event(9)]) }
    }

    @Test(
        "past its limits, a log that refuses to seal keeps removed rows waiting for their records and delivers the rest"
    )
    func deliveryGoesOnPastTheLimits() async throws {
        _ = try await makeLog()
        let log = try await tamper("DELETE FROM entries WHERE seq >= 3; DELETE FROM delivery WHERE seq >= 3")
        var policy = DeliveryPolicy()
        policy.maxEvents = 1  // events 1 and 2 are pending: the older one leaves the queue
        let transport = ScriptedTransport()
        let engine = try SyncEngine(log: log, transport: transport, policy: policy)
        let report = try await engine.cycle()
        #expect(report.removed == ["fifo": 1], "\(report)")
        #expect(report.recordsSealed == 0)
        #expect(transport.delivered.keys.sorted() == [0, 2])
        let table = try log.storage.deliveryTable()
        #expect(table.items[1]?.state == .removed, "seq 1 waits for the record that accounts for it")
        #expect(table.count(.pending) == 0)
        #expect(try await count("entries") == 3)
    }

    @Test("with the queue's rows left, an entry deleted after the last checkpoint keeps its number from reuse")
    func cutAfterTheLastCheckpoint() async throws {
        let (log, error) = try await refusedAppend(after: "DELETE FROM entries WHERE seq = 6")
        #expect(error?.message.hasPrefix("cannot enqueue entry 6: its sequence number is taken") == true)
        #expect(error?.message.contains("removed behind its back") == true, "\(error?.message ?? "")")
        #expect(try log.info().head.seq == 5)
        #expect(try await count("entries") == 6)
    }

    @Test("metadata that is not a sequence number is refused, not read as 0")
    func unreadableMetadata() async throws {
        let (log, error) = try await refusedAppend(
            after: "UPDATE metadata SET value = 'x' WHERE key = 'dataKeySinceSeq'"
        )
        #expect(try log.info().head.seq == 6)
        #expect(error?.message == "the log's metadata dataKeySinceSeq is not a sequence number: x")
    }

    @Test("a newest entry whose signed part was altered is not chained from, in a process that had not seen it")
    func alteredNewestEntry() async throws {
        _ = try await makeLog()
        let log = try await tamper(Self.alterDigest(seq: 6))
        let error = await refusedAppend(to: log)
        #expect(
            error?.message == "cannot append after the newest entry (seq 6): its signature does not verify: it was "
                + "altered or forged behind the log's back; run `auditctl verify`"
        )
        #expect(throws: LogStoreError.self) { try log.checkAppendable() }
        #expect(try await count("entries") == 7)
    }

    @Test("a newest entry signed by a key this device does not hold is not chained from")
    func foreignNewestEntry() async throws {
        _ = try await makeLog()
        let other = try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: KeyStore(directory: directory.path + "/other-keys", credentialsDirectory: nil),
            deviceId: "other"
        )
        _ = try await other.append((1...6).map(LogFixture.event))
        let foreign = try #require(try other.storage.entries(from: 6, through: 6, limit: 1).first)
        let foreignKey = try other.activeSigningKey().id
        let log = try await tamper("UPDATE entries SET bytes = x'\(Hex.encode(foreign.bytes))' WHERE seq = 6")
        let error = await refusedAppend(to: log)
        #expect(
            error?.message == "cannot append after the newest entry (seq 6): it is signed by key \(foreignKey), which "
                + "this device does not hold: it was not written here; run `auditctl verify`"
        )
    }

    @Test("metadata rewound to a retired signing or data key is refused, whichever entry is the newest")
    func rewoundActiveKeys() async throws {
        let original = try await makeLog()
        let retired = try original.storage.snapshot().metadata
        _ = try await original.rotateKeys(reason: "test")  // seq 7
        let active = try original.storage.snapshot().metadata
        let queue = try connection()
        for newest in ["rotation", "event", "checkpoint"] {
            if newest == "event" { _ = try await original.append([LogFixture.event(8)]) }
            if newest == "checkpoint" { _ = try await original.writeCheckpoint() }
            let head = try original.info().head.seq
            for (key, what) in [(AuditLog.Meta.signingKeyId, "signing"), (AuditLog.Meta.dataKeyId, "data")] {
                let (old, new) = (retired[key] ?? "", active[key] ?? "")
                let log = try await tamper("UPDATE metadata SET value = '\(old)' WHERE key = '\(key)'")
                let error = await #expect(throws: LogStoreError.self, "\(what) key, newest \(newest)") {
                    _ = try await log.append([LogFixture.event(9)])
                }
                #expect(error?.code == .corruptState)
                #expect(
                    error?.message == "the log's metadata names \(old) as the active \(what) key, but its chain "
                        + "makes \(new) active: the metadata was altered behind the log's back. Appends are refused "
                        + "so that nothing is signed or encrypted with a retired key; run `auditctl verify`"
                )
                #expect(try log.info().head.seq == head)
                try await queue.write {
                    try $0.execute(sql: "UPDATE metadata SET value = ? WHERE key = ?", arguments: [new, key])
                }
            }
        }
        try queue.close()
        #expect(try await original.append([LogFixture.event(9)]).map(\.seq) == [10])
    }

    @Test("metadata naming another log id refuses appends, and delivery still announces the entries' own log")
    func alteredLogId() async throws {
        let other = String(repeating: "ab", count: 16)
        let (log, error) = try await refusedAppend(after: "UPDATE metadata SET value = '\(other)' WHERE key = 'logId'")
        let logId = try #require(try log.storage.entries(from: 0, through: 0, limit: 1).first).bytes[8..<24].map { $0 }
        #expect(
            error?.message == "the log's metadata names log \(other), but its entries belong to log "
                + "\(Hex.encode(logId)): the metadata was altered behind the log's back; run `auditctl verify`"
        )
        #expect(try log.info().logId == logId)
        let transport = ScriptedTransport()
        _ = try await SyncEngine(log: log, transport: transport).cycle()
        #expect(transport.batches.map(\.logId) == [logId])
        #expect(transport.delivered.keys.sorted() == Array(0...6))
    }

    @Test("an entry missing between the newest checkpoint and the last event leaves the active data key unknown")
    func brokenWayToTheKeySource() async throws {
        let original = try await makeLog()
        _ = try await original.writeCheckpoint()  // seq 7, after event 6
        let log = try await tamper("DELETE FROM entries WHERE seq = 6")
        let error = await refusedAppend(to: log)
        #expect(
            error?.message == "cannot tell which data key is active: on the way back from the newest entry (seq 7) "
                + "to the last event or key rotation, an entry is missing, malformed or does not link; run "
                + "`auditctl verify`"
        )
    }

    @Test("an intact log appends after its checkpoint and rotation, at and past the recorded numbers")
    func intactLogAppends() async throws {
        let log = try await makeLog()
        try log.checkAppendable()
        #expect(try await log.rotateKeys(reason: "test").header.seq == 7)
        #expect(try await log.writeCheckpoint().seq == 8)
        #expect(try await log.append([LogFixture.event(9)]).map(\.seq) == [9])
        let options = ChainVerifier.Options(trustedKeys: try keys.allSigningKeys().map(\.publicKey))
        let report = try log.storage.verify(options: options)
        #expect(report.isClean, "\(report.problems)")
    }
}
