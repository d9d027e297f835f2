public import AuditChain

/// Operator actions on the dead-letter queue (`auditctl dlq`).
extension AuditLog {
    /// The DLQ, oldest entry first.
    public func deadLetters() throws -> [DeliveryItem] {
        try storage.deliveryTable(scope: .head(0)).items(in: .dlq)
    }

    /// Moves DLQ entries back to pending with their attempts reset.
    /// - Parameter seqs: the entries, or nil for the whole DLQ.
    /// - Returns: the entries moved.
    public func replayDeadLetters(_ seqs: Set<UInt64>?) async throws -> [UInt64] {
        let now = configuration.now().millisecondsSinceEpoch
        return try await deliveryTransaction(scope: .head(0)) { table, _ in
            var moved: [UInt64] = []
            for item in table.items(in: .dlq) where seqs?.contains(item.seq) ?? true {
                var item = item
                item.state = .pending
                item.attempts = 0
                item.reason = ""
                item.detail = ""
                item.changedAt = now
                table.items[item.seq] = item
                moved.append(item.seq)
            }
            return moved
        }
    }

    /// Removes DLQ entries from delivery and seals the accounted-removal records (reason `purged`) at once.
    /// - Parameters:
    ///   - seqs: the entries, or nil for the whole DLQ.
    ///   - detail: the operator's reason, carried by the record.
    /// - Returns: the entries purged and the records sealed.
    public func purgeDeadLetters(
        _ seqs: Set<UInt64>?,
        detail: String
    ) async throws -> (purged: [UInt64], records: [SealedEntry]) {
        let now = configuration.now().millisecondsSinceEpoch
        return try await deliveryTransaction { table, sealer in
            var purged: [UInt64] = []
            // A pinned entry (system record, genesis, rotation) never leaves delivery except by being accepted.
            for item in table.items(in: .dlq) where item.priority < .system && seqs?.contains(item.seq) ?? true {
                var item = item
                item.state = .removed
                item.reason = "purged"
                item.detail = detail
                item.changedAt = now
                table.items[item.seq] = item
                purged.append(item.seq)
            }
            guard !purged.isEmpty else { return ([], []) }
            DeliveryStatus.addDropped(["purged": purged.count], stored: sealer.storedMetadata, into: &sealer.metadata)
            let records = try DeliveryLimits.takeRemovalRecords(&table).map { try sealer.seal(.accountedRemoval($0)) }
            return (purged, records)
        }
    }
}
