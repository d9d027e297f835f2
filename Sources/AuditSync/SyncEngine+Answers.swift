import AuditChain
import AuditStore
import AuditWire

/// What the engine does with the collector's per-entry answers (docs/DELIVERY.md, "Outage versus rejection" and
/// "Pinned entries").
extension SyncEngine {
    /// A pinned entry (genesis, rotation, removal, retention or checkpoint record) the collector refused. It never
    /// enters the DLQ: it waits its own backoff, keeps the health at `failing`, and is offered again until accepted.
    struct HeldEntry: Sendable, Hashable {
        /// Refusals so far (the backoff).
        var refusals: Int
        /// What the last refusal was about.
        var cause: RefusalCause
        /// The collector's reason.
        var reason: String
    }

    /// Applies per-entry results in one transaction: ``DeliveryDecider/decide(_:rows:sent:replayed:policy:)``
    /// decides each entry's fate, the table is written as it says, and the engine acts on it (backoff, holds, the
    /// pause for a refusal of the whole log).
    /// - Parameter metadata: written in the same transaction (the verified receipt, a newly pinned collector key).
    func apply(
        _ response: SyncResponse,
        sent: Set<UInt64>,
        replayed: Set<UInt64>,
        metadata receiptMetadata: [String: String],
        report: inout SyncEngine.CycleReport
    ) async throws {
        let policy = policy
        let wall = clocks.wallMilliseconds
        let outcome = try await log.deliveryTransaction(scope: .rows(sent.sorted())) { table, sealer in
            let outcome = DeliveryDecider.decide(
                response,
                rows: table.items,
                sent: sent,
                replayed: replayed,
                policy: policy
            )
            outcome.write(into: &table, at: wall)
            DeliveryStatus.addDropped(outcome.removedByName, stored: sealer.storedMetadata, into: &sealer.metadata)
            sealer.metadata[DeliveryStatus.Meta.lastSuccess] = AuditTimestamp(millisecondsSinceEpoch: wall).rfc3339
            sealer.metadata[DeliveryStatus.Meta.lastError] = ""
            sealer.metadata.merge(receiptMetadata) { _, new in new }
            return outcome
        }
        let now = clocks.elapsed
        let delivered = outcome.delivered
        let retry = outcome.retry
        let deadLettered = outcome.deadLettered
        if outcome.logRefusal == nil { pipeline.recordAnswer() }
        for (seq, attempts) in retry {
            notBefore[seq] = now + policy.jitteredDelay(afterFailures: attempts, unit: clocks.unit())
        }
        for seq in sent where retry[seq] == nil { notBefore[seq] = nil }
        for seq in delivered { release(seq) }
        for (seq, refusal) in outcome.held.sorted(by: { $0.key < $1.key }) {
            hold(seq, reason: refusal.reason, cause: refusal.cause, at: now)
        }
        if let refusal = outcome.logRefusal {
            // The log's state at the collector, not the entries: pause everything like an outage (the schedule,
            // never spending attempts); an entry refused as part of a whole request is offered with the next batch.
            let delay = pipeline.recordOutage(
                at: now,
                reason: "the collector cannot verify the log yet: \(refusal)",
                retryAfter: nil,
                unit: clocks.unit(),
                policy: policy
            )
            offerWholeRequestRefusals()
            report.failure = "the collector cannot verify the log yet: \(refusal)"
            emit(
                "warning",
                "the collector refuses the log for now; delivery paused",
                [
                    "reason": refusal, "retryInMs": String(delay.milliseconds),
                ]
            )
        } else if !delivered.isEmpty {
            offerWholeRequestRefusals()
        }
        report.delivered += delivered.count
        deliveredTotal += delivered.count
        report.deadLettered += deadLettered
        report.retried += retry.count
        report.removed.merge(outcome.removedByName, uniquingKeysWith: +)
        if deadLettered > 0 {
            emit("warning", "entries moved to the dead-letter queue", ["count": String(deadLettered)])
        }
    }

    /// A single entry the backend refused as a whole request: ``DeliveryDecider/decide(refusalOf:reason:replayed:)``
    /// decides (an event goes to the DLQ, or out with a record if it was a replay; a pinned entry is held), the
    /// table is written as it says, and the engine acts on it.
    func reject(
        _ seq: UInt64,
        reason: String,
        replayed: Set<UInt64>,
        report: inout SyncEngine.CycleReport
    ) async throws {
        let wall = clocks.wallMilliseconds
        let outcome = try await log.deliveryTransaction(scope: .rows([seq])) { table, sealer in
            let outcome = DeliveryDecider.decide(
                refusalOf: table.items[seq],
                reason: reason,
                replayed: replayed.contains(seq)
            )
            outcome.write(into: &table, at: wall)
            DeliveryStatus.addDropped(outcome.removedByName, stored: sealer.storedMetadata, into: &sealer.metadata)
            return outcome
        }
        guard let fate = outcome.decisions.first?.fate else { return }
        switch fate {
        case .held(let cause, let reason): hold(seq, reason: reason, cause: cause, at: clocks.elapsed)
        case .removed(let why, _): report.removed[why.rawValue, default: 0] += 1
        case .deadLettered: report.deadLettered += 1
        default: break
        }
        emit("warning", "entry refused by the backend", ["seq": String(seq), "reason": reason])
    }

    /// Holds a refused pinned entry: its own backoff, health `failing`, a critical log line the first time.
    private func hold(_ seq: UInt64, reason: String, cause: RefusalCause, at now: Duration) {
        var entry = held[seq] ?? HeldEntry(refusals: 0, cause: cause, reason: reason)
        entry.refusals += 1
        entry.cause = cause
        entry.reason = reason
        held[seq] = entry
        let delay = min(
            policy.jitteredDelay(afterFailures: entry.refusals, unit: clocks.unit()),
            policy.probeInterval
        )
        // Refused for the log's sake: the pipeline's pause governs it. Refused as such: its own backoff.
        notBefore[seq] = cause == .log ? nil : now + delay
        if let first = held.keys.min(), let lowest = held[first] {
            pipeline.setHold(.refused(seq: first, reason: lowest.reason))
        }
        if entry.refusals == 1 {
            emit(
                "critical",
                "the collector refuses an entry the rest of the log depends on; it stays queued",
                [
                    "seq": String(seq), "reason": reason, "retryInMs": String(delay.milliseconds),
                ]
            )
        }
    }

    /// The collector took a held entry.
    private func release(_ seq: UInt64) {
        guard held.removeValue(forKey: seq) != nil else { return }
        emit("info", "the collector accepted the entry it refused before", ["seq": String(seq)])
        if let first = held.keys.min(), let lowest = held[first] {
            pipeline.setHold(.refused(seq: first, reason: lowest.reason))
        } else if case .refused? = pipeline.hold {
            pipeline.releaseHold()
        }
    }

    /// Entries refused only as part of a whole request are offered again with the next batch: the fault that
    /// refused whole requests (a proxy, a backend restarting) is over once the collector answers per entry.
    private func offerWholeRequestRefusals() {
        for (seq, entry) in held where entry.cause == .wholeRequest && notBefore[seq] != nil {
            notBefore[seq] = nil
            followUp = true
        }
    }
}
