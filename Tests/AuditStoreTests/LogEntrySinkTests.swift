import AuditChain
@testable import AuditStore
@testable import DurableSQLite
import Foundation
import GRDB
import Testing
import TestKit

/// The sink a write transaction's body stores entries through as it seals them, on both storages.
@Suite("LogEntrySink")
struct LogEntrySinkTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory, sqlite
    }

    /// A new log on the storage of `kind`, and a sealer continuing its head.
    static func fixture(_ kind: Kind, in directory: TemporaryDirectory) async throws -> (AuditLog, ChainSealer) {
        let storage: any LogStorage =
            switch kind {
            case .memory: MemoryLogStorage()
            case .sqlite: try SQLiteLogStorage(path: directory.path + "/log.sqlite")
            }
        let log = try await AuditLog.create(
            storage: storage,
            keys: KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil),
            deviceId: "device"
        )
        guard let dataKey = try log.keys.allDataKeys().first else { throw LogStoreError(.corruptState, "no data key") }
        let sealer = ChainSealer(head: try log.info().head, signingKey: try log.activeSigningKey(), dataKey: dataKey)
        return (log, sealer)
    }

    static func seal(_ count: Int, _ sealer: inout ChainSealer) throws -> [SealedEntry] {
        try (0..<count).map { index in
            try sealer.seal(
                LogFixture.event(index),
                time: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
                nonce: Array(repeating: UInt8(index), count: 12)
            )
        }
    }

    @Test(
        "what the body writes to the sink and what it returns commit together, in order, with their priorities",
        arguments: Kind.allCases
    )
    func sinkThenReturned(kind: Kind) async throws {
        let directory = try TemporaryDirectory()
        var (log, sealer) = try await Self.fixture(kind, in: directory)
        let early = try Self.seal(3, &sealer)
        let checkpoint = sealer.checkpoint(time: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_001))
        try await log.storage.append { _, sink in
            try sink.write(Array(early[..<2]), priorities: [.routine, .critical])
            try sink.write([early[2]], priorities: [.routine])
            return (LogAppend(entries: [checkpoint], metadata: ["k": "v"]), ())
        }
        let stored = try log.storage.entries(from: 1, through: .max, limit: 10)
        #expect(stored.map(\.bytes) == (early + [checkpoint]).map(\.serialized))
        #expect(try log.storage.snapshot().head?.hash == checkpoint.entryHash)
        #expect(try log.storage.snapshot().metadata["k"] == "v")
        let delivery = try log.storage.deliveryTable()
        #expect((1...4).map { delivery.items[$0]?.priority } == [.routine, .critical, .routine, .system])
        #expect(delivery.items[3]?.hash == early[2].entryHash)
        #expect(try LogFixture.verify(log).isClean)
    }

    @Test("a body that throws after writing to the sink leaves nothing behind", arguments: Kind.allCases)
    func throwingBodyRollsBack(kind: Kind) async throws {
        struct Refused: Error {}
        let directory = try TemporaryDirectory()
        var (log, sealer) = try await Self.fixture(kind, in: directory)
        let before = try log.storage.snapshot().head
        let entries = try Self.seal(2, &sealer)
        await #expect(throws: Refused.self) {
            try await log.storage.append { _, sink -> (LogAppend, Void) in
                try sink.write(entries, priorities: [.routine, .routine])
                throw Refused()
            }
        }
        #expect(try log.storage.snapshot().head == before)
        #expect(try log.storage.size().count == 1)
        #expect(try log.storage.deliveryTable().items.keys.sorted() == [0])
    }

    @Test(
        "an entry that does not continue the chain, or one without its priority, is refused; nothing is written",
        arguments: Kind.allCases
    )
    func gapRefused(kind: Kind) async throws {
        let directory = try TemporaryDirectory()
        var (log, sealer) = try await Self.fixture(kind, in: directory)
        let entries = try Self.seal(3, &sealer)
        await #expect(throws: LogStoreError.self) {
            try await log.storage.append { _, sink in
                try sink.write([entries[0], entries[2]], priorities: [.routine, .routine])
                return (LogAppend(entries: []), ())
            }
        }
        await #expect(throws: LogStoreError.self) {
            try await log.storage.append { _, sink in
                try sink.write([entries[0]], priorities: [.routine])
                return (LogAppend(entries: [entries[2]]), ())
            }
        }
        let mismatch = await #expect(throws: LogStoreError.self) {
            try await log.storage.append { _, sink in
                try sink.write([entries[0]], priorities: [])
                return (LogAppend(entries: []), ())
            }
        }
        #expect(mismatch?.code == .invalidInput)
        #expect(try log.storage.size().count == 1)
        try await log.storage.append { _, sink in
            try sink.write([entries[0]], priorities: [.routine])
            return (LogAppend(entries: [entries[1]]), ())
        }
        #expect(try log.storage.size().count == 3)
    }

    @Test("a sink kept past its transaction refuses to write", arguments: Kind.allCases)
    func sinkAfterTransaction(kind: Kind) async throws {
        let directory = try TemporaryDirectory()
        var (log, sealer) = try await Self.fixture(kind, in: directory)
        let entries = try Self.seal(1, &sealer)
        let kept = KeptSink()
        try await log.storage.append { _, sink in
            kept.sink = sink
            return (LogAppend(entries: []), ())
        }
        let error = #expect(throws: LogStoreError.self) { try kept.sink?.write(entries, priorities: [.routine]) }
        #expect(error?.code == .invalidInput)
        #expect(try log.storage.size().count == 1)
    }

    @Test(
        "AuditLog streams a large batch through the sink: one valid chain, routine events queued as routine",
        arguments: Kind.allCases
    )
    func largeAppend(kind: Kind) async throws {
        let directory = try TemporaryDirectory()
        let (log, _) = try await Self.fixture(kind, in: directory)
        let receipts = try await log.append((0..<300).map(LogFixture.event))
        #expect(receipts.map(\.seq) == Array(1...300))
        let stored = try log.storage.entries(from: 1, through: 300, limit: 300)
        #expect(zip(stored, receipts).allSatisfy { (try? SealedEntry(serialized: $0.bytes).entryHash) == $1.entryHash })
        let delivery = try log.storage.deliveryTable()
        #expect((1...300).allSatisfy { delivery.items[UInt64($0)]?.priority == .routine })
        let report = try LogFixture.verify(log)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.payloadsOpened == 300)
    }
}

/// Holds a sink beyond its transaction (what a body must not do).
private final class KeptSink: @unchecked Sendable {
    var sink: (any LogEntrySink)?
}

@Suite("BackgroundCheckpointer")
struct BackgroundCheckpointerTests {
    /// Bytes of one WAL frame: a 24-byte header and a 4 KiB page.
    static let frameBytes = 24 + 4096

    /// The WAL beside the database at `path`: how many times it was started again (its header's checkpoint sequence
    /// number, bytes 12-15 big-endian) and its size.
    static func wal(of path: String) throws -> (restarts: Int, bytes: Int) {
        let header = try #require(FileHandle(forReadingAtPath: path + "-wal")).readData(ofLength: 32)
        try #require(header.count == 32)
        let bytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        return (header[12..<16].reduce(0) { $0 << 8 | Int($1) }, bytes)
    }

    @Test("once the WAL passes 1 000 pages it is checkpointed off the commit path, and the log still verifies")
    func checkpointsInBackground() async throws {
        let directory = try TemporaryDirectory()
        let storage = try SQLiteLogStorage(path: directory.path + "/log.sqlite")
        let log = try await AuditLog.create(
            storage: storage,
            keys: KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil),
            deviceId: "device"
        )
        #expect(storage.checkpointer.completedCheckpoints == 0)
        // About 650 bytes of pages an event: 8 000 events pass the wake-up threshold (1 000 pages) at least once.
        for batch in 0..<8 {
            _ = try await log.append((batch * 1000..<(batch + 1) * 1000).map(LogFixture.event))
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while storage.checkpointer.completedCheckpoints == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(storage.checkpointer.completedCheckpoints >= 1)
        let report = try LogFixture.verify(log)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.payloadsOpened == 8000)
    }

    @Test(
        "sequential single appends past the threshold restart the WAL: it is reused, not grown, and checkpoints stay few"
    )
    func restartsTheWAL() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let storage = try SQLiteLogStorage(path: path)
        let log = try await AuditLog.create(
            storage: storage,
            keys: KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil),
            deviceId: "device"
        )
        // One event per commit, as auditd appends: about 2 WAL pages each, so 1 500 commits write about 3 000 pages.
        let commits = 1500
        for index in 0..<commits {
            _ = try await log.append([LogFixture.event(index)])
        }
        let wal = try Self.wal(of: path)
        #expect(wal.restarts >= 1)
        // The thread checkpoints again after `retryPages` more pages, not after every commit past the threshold
        // (which would add two syncs to each one).
        let bound = commits * 3 / Int(BackgroundCheckpointer.retryPages) + 4
        #expect(storage.checkpointer.completedCheckpoints <= bound)
        // Without a restart the WAL would hold every page written since its start (about 3 000, over 12 MB); with
        // one it holds the pages written before the first checkpoint ended (the threshold, and the commits made
        // while the checkpoint ran: a slack of 1 000 pages, about 500 appends, for a loaded machine).
        #expect(wal.bytes <= Int(2 * BackgroundCheckpointer.wakePages) * Self.frameBytes)
        let report = try LogFixture.verify(log)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.payloadsOpened == commits)
    }

    @Test("with the thread stopped, the writer checkpoints itself at the fallback size and the WAL starts again")
    func fallbackCheckpoint() throws {
        let directory = try TemporaryDirectory()
        let (storage, path) = try Self.fillerStorage(in: directory, threadStopped: true)
        let before = try Self.wal(of: path).restarts
        // About 1 000 pages a commit: the WAL passes the fallback threshold (8 192 pages) during the ninth.
        var commits = 0
        while commits < 12 {
            try Self.fill(storage, rows: 1000)
            commits += 1
            if try Self.wal(of: path).restarts != before { break }
        }
        // Only the writer's own checkpoint can have copied the WAL: the commit after it starts the WAL again.
        #expect(try Self.wal(of: path).restarts != before, "the WAL did not start again within \(commits) commits")
        #expect(commits >= 9 && commits <= 10)
        #expect(try Self.wal(of: path).bytes <= Int(BackgroundCheckpointer.fallbackPages + 1100) * Self.frameBytes)
        #expect(storage.checkpointer.completedCheckpoints == 0)
    }

    @Test(
        "a single commit past the fallback threshold only wakes the thread; the writer copies when a wake-up is pending"
    )
    func largeCommitWakesTheThread() throws {
        let directory = try TemporaryDirectory()
        // A thread that takes no wake-up: whatever is copied, the writer copied.
        let (storage, path) = try Self.fillerStorage(in: directory, threadStopped: true)
        let before = try Self.wal(of: path).restarts
        // One commit of about 9 000 pages: a bulk import. Its commit queues a wake-up and returns.
        try Self.fill(storage, rows: 9000)
        #expect(try Self.wal(of: path).bytes >= Int(BackgroundCheckpointer.fallbackPages) * Self.frameBytes)
        // Had it copied the WAL, this commit would start the WAL again. Instead this commit finds the wake-up still
        // pending (the thread fell behind) and copies.
        try Self.fill(storage, rows: 1)
        #expect(try Self.wal(of: path).restarts == before)
        try Self.fill(storage, rows: 1)
        #expect(try Self.wal(of: path).restarts != before)
        #expect(storage.checkpointer.completedCheckpoints == 0)
    }

    @Test("once a bulk import is copied, the first commit of the restarted WAL cuts the file back to the size limit")
    func walCutBack() async throws {
        let directory = try TemporaryDirectory()
        let (storage, path) = try Self.fillerStorage(in: directory, threadStopped: false)
        let before = try Self.wal(of: path).restarts
        // About 9 000 pages (36 MiB): more than the limit.
        try Self.fill(storage, rows: 9000)
        #expect(try Self.wal(of: path).bytes > DurableDatabase.walSizeLimit)
        let deadline = ContinuousClock.now + .seconds(300)
        while storage.checkpointer.completedCheckpoints == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(storage.checkpointer.completedCheckpoints >= 1, "the thread did not copy the import")
        try Self.fill(storage, rows: 1)
        let wal = try Self.wal(of: path)
        #expect(wal.restarts != before)
        #expect(wal.bytes <= DurableDatabase.walSizeLimit)
        // The log's own data is all there.
        let rows = try await storage.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM filler") }
        #expect(rows == 9001)
    }

    /// A storage in `directory` with a table of filler rows, its checkpoint thread stopped if asked, and its path.
    static func fillerStorage(
        in directory: TemporaryDirectory,
        threadStopped: Bool
    ) throws -> (SQLiteLogStorage, String) {
        let path = directory.path + "/log.sqlite"
        let storage = try SQLiteLogStorage(path: path)
        if threadStopped {
            storage.checkpointer.stop()
            #expect(storage.checkpointer.waitUntilStopped(seconds: 10))
        }
        try storage.pool.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB)")
        }
        return (storage, path)
    }

    /// One commit of `rows` rows of 4 000 random bytes: about one WAL page each.
    static func fill(_ storage: SQLiteLogStorage, rows: Int) throws {
        try storage.pool.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO filler (data) SELECT randomblob(4000) FROM n
                    """,
                arguments: [rows]
            )
        }
    }

    @Test("a stopped checkpointer's thread ends and closes its connection")
    func stops() throws {
        let directory = try TemporaryDirectory()
        let storage = try SQLiteLogStorage(path: directory.path + "/log.sqlite")
        let checkpointer = storage.checkpointer
        #expect(!checkpointer.waitUntilStopped(seconds: 0.05))
        checkpointer.stop()
        #expect(checkpointer.waitUntilStopped(seconds: 10))
        #expect(checkpointer.completedCheckpoints == 0)
    }
}

/// The head every append starts from, read from the newest stored entry.
@Suite("SQLite head")
struct SQLiteHeadTests {
    @Test(
        "appending after a malformed newest entry is refused; reading and verifying still work and report it",
        arguments: ["bytes = x'0102'", "bytes = substr(bytes, 1, 200)", "bytes = zeroblob(600)"]
    )
    func damagedHeadIsRefused(damage: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let (log, _) = try await LogEntrySinkTests.fixture(.sqlite, in: directory)
        _ = try await log.append([LogFixture.event(1)])
        let newest = try #require(try log.storage.snapshot().head)
        #expect(newest.seq == 1)

        let tamper = try DatabaseQueue(path: path)
        try await tamper.write { db in
            try db.execute(sql: "UPDATE entries SET \(damage) WHERE seq = (SELECT max(seq) FROM entries)")
        }
        try tamper.close()

        // Read paths still open the log, so that verification can report the damage.
        _ = try log.storage.snapshot()
        let report = try log.storage.verify(
            options: ChainVerifier.Options(trustedKeys: [try log.activeSigningKey().publicKey])
        )
        #expect(!report.isClean)
        let appendError = await #expect(throws: LogStoreError.self) { try await log.append([LogFixture.event(2)]) }
        #expect(appendError?.code == .corruptState)
        #expect(try log.storage.entries(from: 0, through: .max, limit: 10).count == 2)
    }
}

extension SQLiteHeadTests {
    @Test("a damaged copy of the newest entry's hash (the lookup column) is not what the next entry chains from")
    func hashColumnIsNotTrusted() async throws {
        let directory = try TemporaryDirectory()
        let (log, _) = try await LogEntrySinkTests.fixture(.sqlite, in: directory)
        _ = try await log.append([LogFixture.event(1)])
        let tamper = try DatabaseQueue(path: directory.path + "/log.sqlite")
        try await tamper.write { db in
            try db.execute(sql: "UPDATE entries SET hash = zeroblob(32) WHERE seq = (SELECT max(seq) FROM entries)")
        }
        try tamper.close()
        _ = try await log.append([LogFixture.event(2)])
        let report = try log.storage.verify(
            options: ChainVerifier.Options(trustedKeys: [try log.activeSigningKey().publicKey])
        )
        // The chain is intact; the damaged copy itself is what verification reports.
        #expect(report.problems.map { "\($0.seq):\($0.kind)" } == ["1:lookupMismatch"], "\(report.problems)")
        #expect(report.entriesChecked == 3)
    }
}
