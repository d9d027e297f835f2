/// The operator's actions on the dead-letter queue (`auditctl dlq replay`, `dlq purge`), as decisions over its
/// rows; ``AuditLog/replayDeadLetters(_:)`` and ``AuditLog/purgeDeadLetters(_:detail:)`` write them.
extension DeliveryDecider {
    /// Moves DLQ entries back to pending with their attempts reset (``DeliveryFate/requeued``).
    /// - Parameters:
    ///   - deadLetters: the DLQ's rows, oldest first; rows in another state are ignored.
    ///   - seqs: the entries to replay, or nil for the whole DLQ.
    public static func replay(_ deadLetters: [DeliveryItem], selecting seqs: Set<UInt64>?) -> DeliveryOutcome {
        DeliveryOutcome(
            decisions: deadLetters.filter { $0.state == .dlq && seqs?.contains($0.seq) ?? true }.map {
                .init(seq: $0.seq, fate: .requeued)
            }
        )
    }

    /// Removes DLQ entries from delivery (``DeliveryReason/purged``). A pinned entry (system record, genesis,
    /// rotation) never leaves delivery except by being accepted, so it is never purged.
    /// - Parameters:
    ///   - deadLetters: the DLQ's rows, oldest first; rows in another state are ignored.
    ///   - seqs: the entries to purge, or nil for the whole DLQ.
    ///   - detail: the operator's reason, carried by the accounted-removal record.
    public static func purge(
        _ deadLetters: [DeliveryItem],
        selecting seqs: Set<UInt64>?,
        detail: String
    ) -> DeliveryOutcome {
        DeliveryOutcome(
            decisions: deadLetters.filter {
                $0.state == .dlq && $0.priority < .system && seqs?.contains($0.seq) ?? true
            }.map { .init(seq: $0.seq, fate: .removed(.purged, detail: detail)) }
        )
    }
}
