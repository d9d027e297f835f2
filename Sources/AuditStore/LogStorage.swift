public import AuditChain

/// What the storage holds at the start of a write transaction.
public struct LogSnapshot: Sendable {
    /// The last entry, or nil for an empty log. Its hash is empty when the newest entry as stored cannot be
    /// chained from (it does not parse, or is stored under another number than its own): the log then refuses to
    /// seal (``AuditLog/checkAppendable()``).
    public var head: ChainHead?
    /// Small key/value metadata kept beside the log (active key ids, latest checkpoint...).
    public var metadata: [String: String]
    /// The newest entry as stored, when it can be chained from: ``AuditLog`` checks its signature before sealing
    /// after it. A storage that leaves it nil is trusted not to hold forgeries.
    public var newest: SealedEntry?
    /// The newest entry that names the active data key (an event, a key rotation or the genesis), found from
    /// ``newest`` back along the links by ``keySource(from:previous:)``; nil when `newest` is nil or the way back
    /// breaks. ``AuditLog`` checks the active keys in the metadata against it and `newest`.
    public var keySource: SealedEntry?

    /// Creates a snapshot.
    public init(
        head: ChainHead?,
        metadata: [String: String],
        newest: SealedEntry? = nil,
        keySource: SealedEntry? = nil
    ) {
        self.head = head
        self.metadata = metadata
        self.newest = newest
        self.keySource = keySource
    }

    /// Whether an entry of `kind` names the data key active after it: an event its own, a rotation, an epoch record
    /// and the genesis the one they introduce. Checkpoints, removal, close and crash records name none.
    static func namesDataKey(_ kind: RecordKind) -> Bool {
        kind == .event || kind == .keyRotation || kind == .epoch || kind == .genesis
    }

    /// The newest entry from `newest` back that names the active data key (``keySource``). Each entry on the way
    /// must be stored under its own number and hash to what the entry after it links to, so it is as authentic as
    /// `newest`; nil when one is missing, does not parse or does not link. Retention never deletes entries on the
    /// way (``AuditLog/pruneDelivered(before:)``), so a break is damage.
    /// - Parameter previous: the bytes stored under a sequence number, or nil.
    public static func keySource(
        from newest: SealedEntry,
        previous: (UInt64) throws -> [UInt8]?
    ) rethrows -> SealedEntry? {
        var current = newest
        while !namesDataKey(current.header.kind) {
            let seq = current.header.seq
            guard seq > 0, let bytes = try previous(seq - 1), let entry = try? SealedEntry(serialized: bytes),
                entry.header.seq == seq - 1, entry.entryHash == current.header.prevHash
            else { return nil }
            current = entry
        }
        return current
    }
}

/// What one write transaction adds: entries after the head, and metadata updates.
public struct LogAppend: Sendable {
    /// Entries to insert, in order, continuing the head. Every appended entry joins the delivery queue in the same
    /// transaction, with its kind's priority (``DeliveryPriority/of(kind:)``); events that take their catalogue
    /// priority go through a ``LogEntrySink``.
    public var entries: [SealedEntry]
    /// Metadata to set.
    public var metadata: [String: String]

    /// Creates an append.
    public init(entries: [SealedEntry], metadata: [String: String] = [:]) {
        self.entries = entries
        self.metadata = metadata
    }

    /// The delivery priority of each appended entry, in order.
    public var entryPriorities: [DeliveryPriority] {
        entries.map { .of(kind: $0.header.kind) }
    }
}

/// One stored entry: its sequence number and serialized bytes.
public struct StoredEntry: Sendable, Hashable {
    /// The sequence number the storage files it under.
    public var seq: UInt64
    /// The serialized entry (docs/FORMAT.md, section 5).
    public var bytes: [UInt8]

    /// Creates a stored entry.
    public init(seq: UInt64, bytes: [UInt8]) {
        self.seq = seq
        self.bytes = bytes
    }
}

/// Writes entries into an open write transaction before its body returns, so that storing them overlaps sealing
/// the next ones. Valid only while the body that received it runs, and on the thread that runs it.
public protocol LogEntrySink {
    /// Writes entries that continue the head (or the entries this sink wrote before); each joins the delivery queue
    /// as pending with its priority. They are committed with what the body returns, or not at all.
    /// - Parameter priorities: one per entry.
    /// - Throws: ``LogStoreError`` if an entry does not continue the chain or the storage fails.
    func write(_ entries: [SealedEntry], priorities: [DeliveryPriority]) throws

    /// Claims an idempotency tag for the entry this transaction will write at `seq` (the index holds one tag per
    /// entry and one entry per tag), with whether the event's `occurredAt` was stamped at ingest. A claim commits
    /// with the transaction, and only if the entry at `seq` is written by then.
    /// - Returns: nil when the tag was free and is now claimed; otherwise what holds it already (an entry of the
    ///   log, or a claim made earlier in this transaction), and nothing is claimed.
    /// - Throws: ``LogStoreError`` when the storage fails or `seq` is claimed already.
    func claim(_ tag: IdempotencyTag, for seq: UInt64, occurredAtStamped: Bool) throws -> IdempotencyHolder?

    /// Drops the claims this transaction made for `seq` and after (a batch of events that is refused).
    func releaseClaims(from seq: UInt64) throws

    /// The entry stored under `seq`, as the transaction sees it, or nil.
    func storedEntry(at seq: UInt64) throws -> StoredEntry?
    /// The wrapped secret of the subject with this tag in the key table, as the transaction sees it, or nil
    /// (docs/FORMAT.md, section 13.9).
    func subjectSecret(tag: [UInt8]) throws -> [UInt8]?
    /// Stores a subject's wrapped secret under a tag the table does not hold yet; committed with the transaction.
    /// - Throws: ``LogStoreError`` when the tag is held already or the storage fails.
    func storeSubjectSecret(tag: [UInt8], wrapped: [UInt8]) throws
    /// Adds `count` to the number of events sealed under the secret of the subject whose row has this tag (the
    /// row's `sealed` count, docs/FORMAT.md section 13.9); committed with the transaction that seals them.
    /// - Throws: ``LogStoreError`` when the table holds no row with this tag or the storage fails.
    func addSubjectEvents(tag: [UInt8], count: Int) throws
    /// Deletes a subject's row from the key table, in the transaction that seals its erasure record, so that both
    /// commit or neither does.
    /// - Returns: nil when the table held no row with this tag; otherwise the row's count of sealed events (nil
    ///   inside when the row predates the count, schema version 5).
    func eraseSubjectSecret(tag: [UInt8]) throws -> Int??
}

/// Reads the log's entries as an open write transaction sees them. Valid only while the body that received it
/// runs, and on the thread that runs it.
public protocol LogEntryReader {
    /// How many entries are stored under sequence numbers `from ... through`.
    func count(from: UInt64, through: UInt64) throws -> Int
    /// The entry stored under `seq`, or nil.
    func entry(at seq: UInt64) throws -> StoredEntry?
}

/// The storage under the log: a small protocol so the chain logic is tested without SQLite.
///
/// Implementations make ``append(_:)`` atomic and exclusive across threads *and processes*: the body sees the
/// head as of the start of the transaction, and what it returns is committed durably before `append` returns.
/// They keep an idempotency index (``LogEntrySink/claim(_:for:occurredAtStamped:)``) whose rows leave with their entries: an
/// entry deleted by ``prune(through:keep:_:)`` takes its tag with it.
public protocol LogStorage: Sendable {
    /// Runs `body` in one exclusive write transaction and commits what it returns.
    /// - Parameter body: receives the current head and metadata, and a sink to write entries early; returns the
    ///   entries (continuing those written to the sink) and metadata to write, and a value handed back to the
    ///   caller. If it throws, nothing is written, not even what went to the sink.
    /// - Throws: the body's error, or a ``LogStoreError`` when the storage fails.
    func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, any LogEntrySink) throws -> (LogAppend, Result)
    ) async throws -> Result

    /// The current head and metadata (a read, not a transaction).
    func snapshot() throws -> LogSnapshot

    /// Up to `limit` entries with `from <= seq <= through`, in sequence order.
    func entries(from: UInt64, through: UInt64, limit: Int) throws -> [StoredEntry]

    /// Number of entries and their total serialized size.
    func size() throws -> (count: Int, bytes: Int)

    /// Runs `body` in one exclusive write transaction with the rows of `scope` of the delivery table loaded
    /// (the rest counted), and a reader of the entries the transaction sees; commits the loaded rows as the body
    /// leaves them together with the entries and metadata it returns (which join the table as pending).
    func withDelivery<Result: Sendable>(
        scope: DeliveryScope,
        _ body: @Sendable (LogSnapshot, inout DeliveryTable, any LogEntryReader) throws -> (LogAppend, Result)
    ) async throws -> Result

    /// The rows of `scope` of the delivery table, the rest counted (a read, not a transaction).
    func deliveryTable(scope: DeliveryScope) throws -> DeliveryTable

    /// Every row of the subject key table: tags and wrapped secrets (a read, not a transaction).
    func subjectSecrets() throws -> [(tag: [UInt8], wrapped: [UInt8])]
    /// After an erasure committed: leaves no copy of the deleted rows in the storage's files (SQLite: the rows were
    /// deleted with `secure_delete`; a `wal_checkpoint(TRUNCATE)` writes the zeroed pages home and empties the WAL).
    /// - Throws: ``LogStoreError`` when the checkpoint cannot complete (readers kept it from truncating the WAL).
    func scrubErased() throws
    /// Deletes the entries with `seq <= through` except `keep` (retention), in the same transaction as the
    /// append `body` returns (the pruning record).
    func prune(
        through: UInt64,
        keep: Set<UInt64>,
        _ body: @Sendable (LogSnapshot) throws -> LogAppend
    ) async throws -> Int
}

extension LogStorage {
    /// ``append(_:)-(LogSnapshot,LogEntrySink)`` for a body that writes everything at its end.
    public func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await append { snapshot, _ in try body(snapshot) }
    }

    /// ``withDelivery(scope:_:)`` with every row loaded.
    public func withDelivery<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, inout DeliveryTable, any LogEntryReader) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await withDelivery(scope: .all, body)
    }

    /// The whole delivery table (a read, not a transaction).
    public func deliveryTable() throws -> DeliveryTable {
        try deliveryTable(scope: .all)
    }

    /// Visits every entry with `from <= seq <= through` in pages, never holding the whole log in memory.
    /// - Parameter visit: return false to stop early.
    public func forEachEntry(
        from: UInt64 = 0,
        through: UInt64 = .max,
        pageSize: Int = 1024,
        _ visit: (StoredEntry) throws -> Bool
    ) throws {
        var next = from
        while next <= through {
            let page = try entries(from: next, through: through, limit: pageSize)
            for entry in page {
                guard try visit(entry) else { return }
            }
            guard let last = page.last, page.count == pageSize, last.seq < .max else { return }
            next = last.seq + 1
        }
    }
}

/// A storage that wraps another and forwards every call to it unless it implements the call itself: for wrappers
/// that observe or alter one operation (timing the transactions, injecting a fault) without restating the rest.
public protocol ForwardingLogStorage: LogStorage {
    /// The storage calls are forwarded to.
    var base: any LogStorage { get }
}

extension ForwardingLogStorage {
    public func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, any LogEntrySink) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await base.append(body)
    }

    public func snapshot() throws -> LogSnapshot { try base.snapshot() }

    public func entries(from: UInt64, through: UInt64, limit: Int) throws -> [StoredEntry] {
        try base.entries(from: from, through: through, limit: limit)
    }

    public func size() throws -> (count: Int, bytes: Int) { try base.size() }

    public func withDelivery<Result: Sendable>(
        scope: DeliveryScope,
        _ body: @Sendable (LogSnapshot, inout DeliveryTable, any LogEntryReader) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try await base.withDelivery(scope: scope, body)
    }

    public func deliveryTable(scope: DeliveryScope) throws -> DeliveryTable { try base.deliveryTable(scope: scope) }
    public func subjectSecrets() throws -> [(tag: [UInt8], wrapped: [UInt8])] { try base.subjectSecrets() }
    public func scrubErased() throws { try base.scrubErased() }

    public func prune(
        through: UInt64,
        keep: Set<UInt64>,
        _ body: @Sendable (LogSnapshot) throws -> LogAppend
    ) async throws -> Int {
        try await base.prune(through: through, keep: keep, body)
    }
}
