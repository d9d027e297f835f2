import AuditChain
import AuditWire
import Crypto
import Foundation
public import ServiceLifecycle

/// The collector's database: the entries it holds per log, the keys it learned, removal records, forks and chain
/// breaks, contiguous heads, each log's Merkle tree, and recent batch results. Its logic is written once against
/// ``CollectorDatabase``, the storage protocol, and runs on either engine: SQLite (the default) or PostgreSQL
/// (several replicas, one database).
public final class CollectorStore: Sendable {
    /// The engine.
    public let database: any CollectorDatabase
    /// Incidents (forks, chain breaks, checkpoint conflicts) kept per log; past it they are only counted.
    public let maxIncidentsPerLog: Int
    /// The group commit of concurrent batches (``IngestGroups``).
    let groups: IngestGroups<IngestRequest, Outcome>

    /// Opens (creating if needed) the SQLite database at `path` and migrates it. A new database is created with
    /// mode 0600 whatever the umask, and so are its WAL and shared-memory files (SQLite gives them the database
    /// file's mode).
    /// - Parameters:
    ///   - path: the database file.
    ///   - maxIncidentsPerLog: incidents kept per log (at least 1).
    ///   - groupCommit: how concurrent batches share transactions.
    /// - Throws: ``CollectorError`` if SQLite cannot open it or it has another schema.
    public init(
        path: String,
        maxIncidentsPerLog: Int = CollectorStore.defaultMaxIncidentsPerLog,
        groupCommit: GroupCommit = GroupCommit()
    ) throws(CollectorError) {
        let database = try SQLiteCollectorDatabase(path: path) { session in try CollectorSchema.migrate(session) }
        self.maxIncidentsPerLog = max(1, maxIncidentsPerLog)
        self.database = database
        groups = Self.groups(database, groupCommit: groupCommit, maxIncidents: self.maxIncidentsPerLog)
    }

    /// Opens a store on `database` and applies its missing migrations, once, whatever other replica starts at the
    /// same time (docs/COLLECTOR.md section 4).
    /// - Throws: ``CollectorError`` for a database of another schema, or the engine's error.
    public init(
        database: any CollectorDatabase,
        maxIncidentsPerLog: Int = CollectorStore.defaultMaxIncidentsPerLog,
        groupCommit: GroupCommit = GroupCommit()
    )
        async throws
    {
        self.maxIncidentsPerLog = max(1, maxIncidentsPerLog)
        self.database = database
        groups = Self.groups(database, groupCommit: groupCommit, maxIncidents: self.maxIncidentsPerLog)
        _ = try await database.exclusive { session in try CollectorSchema.migrate(session) }
    }

    /// Answers when the database answers a trivial read (`SELECT 1`): the readiness check of `GET /readyz`.
    /// - Throws: the database's error when it cannot be read (closed, unreachable, no connection free); a
    ///   `CancellationError` when the calling task is cancelled first.
    public func ping() async throws {
        _ = try await database.read { session in try session.rows("SELECT 1", []) }
    }

    /// What the store's owner must run in its service group (the PostgreSQL pool run as a service), or nil.
    public var service: (any Service)? { database.service }

    /// Releases the engine's connections.
    public func close() async {
        await database.close()
    }

    /// How many recent batch results are kept for replay.
    static let batchMemory = 10_000

    /// What a batch needs to know in advance: the log's keys and the held entries at and around its seqs.
    func preview(logId: [UInt8], seqs: [UInt64]) async throws -> (keys: [KeyID: KeyGrant], held: [UInt64: HeldEntry]) {
        try await database.read { db in
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
        /// How long deciding the entries' results took (``IngestDecider``, no database work); zero when replayed.
        var decideDuration: Duration = .zero
        /// The log's keys after the batch, as its transaction read and changed them (empty when replayed).
        var keys: [KeyID: KeyGrant] = [:]
        /// The log's tree and head as the batch's group transaction left them (nil for a replayed batch or a log
        /// without a head): its receipt is made of them (``treeReceiptParts(logId:from:committed:)``).
        var committed: CommittedTree? = nil
    }

    /// Decides and stores a batch, then advances the head, in the transaction of its group (``IngestGroups``);
    /// replays the results of a batch already seen with the same id and content unless some of its entries were
    /// refused as retryable.
    func ingest(
        batch: BatchKey,
        entries: [IncomingEntry],
        checkpoint: SignedCheckpoint?,
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        receivedAt: AuditTimestamp
    ) async throws -> Outcome {
        let request = IngestRequest(
            batch: batch,
            entries: entries,
            checkpoint: checkpoint,
            trusted: trusted,
            receivedAt: receivedAt
        )
        return try await groups.submit(request, entries: entries.count)
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
