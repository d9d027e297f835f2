import AuditChain
import AuditWire
import DurableSQLite
import Crypto
import Foundation
import GRDB

/// The collector's SQLite database (WAL, `synchronous = FULL`, through GRDB): the entries it holds per log,
/// the keys it learned, removal records, forks and chain breaks, contiguous heads, and recent batch results.
public final class CollectorStore: Sendable {
    let pool: DatabasePool
    /// The database file.
    public let path: String
    /// Incidents (forks, chain breaks, checkpoint conflicts) kept per log; past it they are only counted.
    public let maxIncidentsPerLog: Int

    /// Opens (creating if needed) the database at `path`. A new database is created with mode 0600 whatever the
    /// umask, and so are its WAL and shared-memory files (SQLite gives them the database file's mode).
    /// - Parameters:
    ///   - path: the database file.
    ///   - maxIncidentsPerLog: incidents kept per log (at least 1).
    /// - Throws: ``CollectorError`` if SQLite cannot open it or it has another schema.
    public init(path: String, maxIncidentsPerLog: Int = CollectorStore.defaultMaxIncidentsPerLog) throws(CollectorError)
    {
        self.path = path
        self.maxIncidentsPerLog = max(1, maxIncidentsPerLog)
        try PrivateDatabaseFile.create(path)
        do {
            // A receipted entry must survive power loss: WAL with synchronous = FULL.
            pool = try DurableDatabase.open(path: path, label: "audit-collector", migrate: Self.migrate)
        } catch let error as CollectorError {
            throw error
        } catch {
            throw CollectorError(.storage, "cannot open the collector database \(path): \(error)")
        }
    }

    static let schemaVersion = "1"
    /// How many recent batch results are kept for replay.
    static let batchMemory = 10_000

    private static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS entries (
                    logId BLOB NOT NULL, seq INTEGER NOT NULL, kind INTEGER NOT NULL,
                    entryHash BLOB NOT NULL, prevHash BLOB NOT NULL, bytes BLOB NOT NULL, receivedAt INTEGER NOT NULL,
                    UNIQUE (logId, seq)
                );
                CREATE TABLE IF NOT EXISTS keys (
                    logId BLOB NOT NULL, keyId BLOB NOT NULL, publicKey BLOB NOT NULL,
                    fromSeq INTEGER NOT NULL, untilSeq INTEGER, PRIMARY KEY (logId, keyId)
                );
                CREATE TABLE IF NOT EXISTS removals (
                    logId BLOB NOT NULL, recordSeq INTEGER NOT NULL, firstSeq INTEGER NOT NULL,
                    lastSeq INTEGER NOT NULL, count INTEGER NOT NULL, lastRemovedHash BLOB NOT NULL,
                    PRIMARY KEY (logId, recordSeq)
                );
                CREATE TABLE IF NOT EXISTS incidents (
                    logId BLOB NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, entryHash BLOB NOT NULL,
                    bytes BLOB NOT NULL, reason TEXT NOT NULL, receivedAt INTEGER NOT NULL,
                    UNIQUE (logId, seq, kind, entryHash)
                );
                CREATE TABLE IF NOT EXISTS heads (logId BLOB PRIMARY KEY, seq INTEGER NOT NULL, hash BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS batches (
                    batchId TEXT PRIMARY KEY, logId BLOB NOT NULL, digest BLOB NOT NULL, results BLOB NOT NULL,
                    retryable INTEGER NOT NULL, receivedAt INTEGER NOT NULL
                );
                CREATE TABLE IF NOT EXISTS metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS trees (logId BLOB PRIMARY KEY, size INTEGER NOT NULL, coveredSeq INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS tree_tiles (
                    logId BLOB NOT NULL, level INTEGER NOT NULL, idx INTEGER NOT NULL, hashes BLOB NOT NULL,
                    PRIMARY KEY (logId, level, idx)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS checkpoints (
                    logId BLOB PRIMARY KEY, seq INTEGER NOT NULL, entryHash BLOB NOT NULL, checkpoint BLOB NOT NULL,
                    receivedAt INTEGER NOT NULL
                );
                """
        )
        try createIncidentTables(db)
        let version = try String.fetchOne(db, sql: "SELECT value FROM metadata WHERE key = 'schemaVersion'")
        if let version, version != schemaVersion {
            throw CollectorError(.corruptState, "the collector database has schema version \(version), expected 1")
        }
        try db.execute(sql: "INSERT OR IGNORE INTO metadata (key, value) VALUES ('schemaVersion', ?)", arguments: ["1"])
        try createLeafIndexTables(db)
        try createWitnessTable(db)
    }

    /// What a batch needs to know in advance: the log's keys and the held entries at and around its seqs.
    func preview(logId: [UInt8], seqs: [UInt64]) async throws -> (keys: [KeyID: KeyGrant], held: [UInt64: HeldEntry]) {
        try await pool.read { db in
            (try Self.keys(db, logId: logId), try Self.held(db, logId: logId, around: seqs))
        }
    }

    /// The outcome of one batch transaction.
    struct Outcome: Sendable {
        var results: [SyncEntryResult]
        var head: CollectorHead?
        var replayed: Bool
        /// What became of the batch's device checkpoint (nil: none, or a replayed batch).
        var checkpoint: CheckpointVerdict? = nil
        /// Incidents of this batch not kept because the log holds ``CollectorStore/maxIncidentsPerLog`` already.
        var incidentsNotKept = 0
    }

    /// Decides and stores a batch in one transaction, then advances the head; replays the results of a batch
    /// already seen with the same id and content unless some of its entries were refused as retryable.
    func ingest(
        batch: BatchKey,
        entries: [IncomingEntry],
        checkpoint: SignedCheckpoint?,
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        receivedAt: AuditTimestamp
    ) async throws -> Outcome {
        let maxIncidents = maxIncidentsPerLog
        return try await pool.write { db in
            if let results = try Self.replay(db, batch) {
                return Outcome(results: results, head: try Self.head(db, logId: batch.logId), replayed: true)
            }
            let plan = IngestDecider.plan(
                entries,
                logId: batch.logId,
                trusted: trusted,
                keys: try Self.keys(db, logId: batch.logId),
                held: try Self.held(db, logId: batch.logId, around: entries.map(\.seq))
            )
            let notKept = try Self.apply(
                plan,
                db,
                logId: batch.logId,
                receivedAt: receivedAt,
                maxIncidents: maxIncidents
            )
            try Self.recordNonleaves(db, logId: batch.logId, accepted: plan.accepted.map(\.seq))
            // The entries this batch stored feed the tree without being read back.
            var known: [UInt64: [UInt8]] = [:]
            for (entry, result) in zip(entries, plan.results) where result.status == .accepted {
                known[entry.seq] = entry.bytes
            }
            let head = try Self.advanceHead(db, logId: batch.logId, known: known)
            try Self.remember(db, batch, results: plan.results, receivedAt: receivedAt)
            var outcome = Outcome(results: plan.results, head: head, replayed: false, incidentsNotKept: notKept)
            if let checkpoint {
                // After the entries: a genesis or rotation in this batch may be what makes its key known.
                let recorded = try Self.record(
                    checkpoint,
                    db,
                    logId: batch.logId,
                    trusted: trusted,
                    at: receivedAt,
                    maxIncidents: maxIncidents
                )
                outcome.checkpoint = recorded.verdict
                outcome.incidentsNotKept += recorded.incidentsNotKept
            }
            return outcome
        }
    }

    /// Identifies a batch for replay: its id, log and a digest of its entries.
    struct BatchKey: Sendable {
        var batchId: String
        var logId: [UInt8]
        var digest: [UInt8]

        init(_ batch: SyncBatch) {
            batchId = batch.batchId
            logId = batch.logId
            var hasher = SHA256()
            for entry in batch.entries {
                withUnsafeBytes(of: entry.seq.bigEndian) { hasher.update(bufferPointer: $0) }
                withUnsafeBytes(of: UInt64(entry.bytes.count).bigEndian) { hasher.update(bufferPointer: $0) }
                hasher.update(data: entry.bytes)
            }
            digest = Array(hasher.finalize())
        }
    }
}

extension CollectorStore {
    /// Answers when the database answers a trivial read (`SELECT 1`): the readiness check of `GET /readyz`.
    /// - Throws: the database's error when it cannot be read (closed, unreadable, no reader free); a
    ///   `CancellationError` when the calling task is cancelled first.
    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }
}
