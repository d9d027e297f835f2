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
            let outcome = DeliveryDecider.replay(table.items(in: .dlq), selecting: seqs)
            outcome.write(into: &table, at: now)
            return outcome.seqs
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
            // A pinned entry (system record, genesis, rotation) never leaves delivery except by being accepted.
            let outcome = DeliveryDecider.purge(table.items(in: .dlq), selecting: seqs, detail: detail)
            let purged = outcome.seqs
            guard !purged.isEmpty else { return ([], []) }
            outcome.write(into: &table, at: now)
            DeliveryStatus.addDropped(outcome.removedByName, stored: sealer.storedMetadata, into: &sealer.metadata)
            let records = try DeliveryLimits.takeRemovalRecords(&table).map { try sealer.seal(.accountedRemoval($0)) }
            return (purged, records)
        }
    }
}
