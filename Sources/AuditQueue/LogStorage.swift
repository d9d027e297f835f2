public import AuditChain

/// What the storage holds at the start of a write transaction.
public struct LogSnapshot: Sendable {
    /// The last entry, or nil for an empty log.
    public var head: ChainHead?
    /// Small key/value metadata kept beside the log (active key ids, latest checkpoint...).
    public var metadata: [String: String]

    /// Creates a snapshot.
    public init(head: ChainHead?, metadata: [String: String]) {
        self.head = head
        self.metadata = metadata
    }
}

/// What one write transaction adds: entries after the head, and metadata updates.
public struct LogAppend: Sendable {
    /// Entries to insert, in order, continuing the head.
    public var entries: [SealedEntry]
    /// Metadata to set.
    public var metadata: [String: String]
    /// Delivery priorities of entries that do not take their kind's default (``DeliveryPriority/of(kind:)``).
    /// Every appended entry joins the delivery queue in the same transaction.
    public var priorities: [UInt64: DeliveryPriority]

    /// Creates an append.
    public init(
        entries: [SealedEntry],
        metadata: [String: String] = [:],
        priorities: [UInt64: DeliveryPriority] = [:]
    ) {
        self.entries = entries
        self.metadata = metadata
        self.priorities = priorities
    }

    /// The delivery rows of the appended entries.
    public var deliveryItems: [DeliveryItem] {
        entries.map { entry in
            DeliveryItem(
                seq: entry.header.seq,
                priority: priorities[entry.header.seq] ?? .of(kind: entry.header.kind),
                enqueuedAt: entry.header.time.millisecondsSinceEpoch,
                hash: entry.entryHash
            )
        }
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

/// The storage under the log: a small protocol so the chain logic is tested without SQLite.
///
/// Implementations make ``append(_:)`` atomic and exclusive across threads *and processes*: the body sees the
/// head as of the start of the transaction, and what it returns is committed durably before `append` returns.
public protocol LogStorage: Sendable {
    /// Runs `body` in one exclusive write transaction and commits what it returns.
    /// - Parameter body: receives the current head and metadata; returns the entries and metadata to write, and a
    ///   value handed back to the caller. If it throws, nothing is written.
    /// - Throws: the body's error, or a ``LogStoreError`` when the storage fails.
    func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot) throws -> (LogAppend, Result)
    ) async throws -> Result

    /// The current head and metadata (a read, not a transaction).
    func snapshot() throws -> LogSnapshot

    /// Up to `limit` entries with `from <= seq <= through`, in sequence order.
    func entries(from: UInt64, through: UInt64, limit: Int) throws -> [StoredEntry]

    /// Number of entries and their total serialized size.
    func size() throws -> (count: Int, bytes: Int)

    /// Runs `body` in one exclusive write transaction with the rows of `scope` of the delivery table loaded
    /// (the rest counted); commits the loaded rows as the body leaves them together with the entries and metadata
    /// it returns (which join the table as pending).
    func withDelivery<Result: Sendable>(
        scope: DeliveryScope,
        _ body: @Sendable (LogSnapshot, inout DeliveryTable) throws -> (LogAppend, Result)
    ) async throws -> Result

    /// The rows of `scope` of the delivery table, the rest counted (a read, not a transaction).
    func deliveryTable(scope: DeliveryScope) throws -> DeliveryTable

    /// Deletes the entries with `seq <= through` except `keep` (retention), in the same transaction as the
    /// append `body` returns (the pruning record).
    func prune(
        through: UInt64,
        keep: Set<UInt64>,
        _ body: @Sendable (LogSnapshot) throws -> LogAppend
    ) async throws -> Int
}

extension LogStorage {
    /// ``withDelivery(scope:_:)`` with every row loaded.
    public func withDelivery<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, inout DeliveryTable) throws -> (LogAppend, Result)
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
