public import AuditChain

/// Seals system records inside a delivery transaction, after the head that transaction read.
public struct SystemRecordSealer: Sendable {
    var writer: LogWriter
    let time: AuditTimestamp
    /// Metadata to write with the transaction.
    public var metadata: [String: String] = [:]

    /// The log's metadata as the transaction read it.
    public var storedMetadata: [String: String] { writer.snapshot.metadata }

    /// The head as the transaction read it plus what was sealed since.
    public var head: ChainHead { writer.sealer.head }

    /// Seals an accounted-removal, retention or checkpoint record.
    @discardableResult
    public mutating func seal(_ record: SystemRecord) -> SealedEntry {
        let entry = writer.sealer.seal(record, time: time)
        writer.entries.append(entry)
        return entry
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
            var sealer = SystemRecordSealer(writer: try self.writer(for: snapshot), time: now())
            let result = try body(&table, &sealer)
            let metadata = sealer.writer.metadata.merging(sealer.metadata) { _, new in new }
            return (LogAppend(entries: sealer.writer.entries, metadata: metadata), result)
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
