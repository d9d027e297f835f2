public import AuditChain

/// Seals system records inside a delivery transaction, after the head that transaction read.
///
/// The writer is opened at the first seal, not before: a transaction that only moves delivery rows seals nothing,
/// and goes on when the log refuses to seal (``AuditLog/checkAppendable()``). Whoever damages the newest rows must
/// not also stop the entries before them from leaving the device.
public struct SystemRecordSealer: Sendable {
    private let snapshot: LogSnapshot
    private let open: @Sendable (LogSnapshot) throws -> LogWriter
    private(set) var writer: LogWriter?
    let time: AuditTimestamp
    /// Metadata to write with the transaction.
    public var metadata: [String: String] = [:]

    init(
        snapshot: LogSnapshot,
        time: AuditTimestamp,
        open: @escaping @Sendable (LogSnapshot) throws -> LogWriter
    ) {
        self.snapshot = snapshot
        self.time = time
        self.open = open
    }

    /// The log's metadata as the transaction read it.
    public var storedMetadata: [String: String] { snapshot.metadata }

    /// Seals an accounted-removal, retention or checkpoint record.
    /// - Throws: ``LogStoreError`` when the log refuses to seal.
    @discardableResult
    public mutating func seal(_ record: SystemRecord) throws -> SealedEntry {
        var current = try writer ?? open(snapshot)
        let entry = current.sealer.seal(record, time: time)
        current.entries.append(entry)
        writer = current
        return entry
    }

    /// Whether the log lets this transaction seal (``AuditLog/checkAppendable()``). When it does not, the caller
    /// leaves removed rows waiting for their records, as it does while delivery is paused, and goes on delivering:
    /// nothing new enters a log that refuses to seal, so its queue cannot grow meanwhile.
    /// - Throws: ``LogStoreError`` for a failure other than the log's refusal (a key that cannot be read).
    public mutating func maySeal() throws -> Bool {
        guard writer == nil else { return true }
        do {
            writer = try open(snapshot)
            return true
        } catch let error as LogStoreError where error.code == .corruptState {
            return false
        }
    }

    /// What the transaction appends: the sealed records, and the metadata set.
    var append: LogAppend {
        LogAppend(
            entries: writer?.entries ?? [],
            metadata: (writer?.metadata ?? [:]).merging(metadata) { _, new in new }
        )
    }
}

extension AuditLog {
    /// Runs `body` in one write transaction with the delivery table: the table as the body leaves it, the records
    /// it seals and the metadata it sets are committed together, or nothing is.
    /// - Parameters:
    ///   - scope: the rows of the table the body needs (the rest are counted, not loaded).
    ///   - body: reads and changes the table, seals records and sets metadata.
    public func deliveryTransaction<Result: Sendable>(
        scope: DeliveryScope = .all,
        _ body: @Sendable (inout DeliveryTable, inout SystemRecordSealer) throws -> Result
    ) async throws -> Result {
        let now = configuration.now
        return try await storage.withDelivery(scope: scope) { snapshot, table in
            var sealer = SystemRecordSealer(snapshot: snapshot, time: now()) { try self.writer(for: $0) }
            let result = try body(&table, &sealer)
            return (sealer.append, result)
        }
    }

    /// The serialized entries with these sequence numbers, in order (missing ones are skipped).
    public func entries(seqs: [UInt64]) throws -> [StoredEntry] {
        var result: [StoredEntry] = []
        result.reserveCapacity(seqs.count)
        var index = 0
        let sorted = seqs.sorted()
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] + 1 { end += 1 }
            result += try storage.entries(from: sorted[index], through: sorted[end], limit: end - index + 1)
            index = end + 1
        }
        return result
    }
}
