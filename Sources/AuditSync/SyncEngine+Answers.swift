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

    /// What a refusal of a pinned entry was about, which decides when the entry is offered again.
    enum RefusalCause: Sendable, Hashable {
        /// The collector's verdict on the entry (400, 409, 422 per entry): its own backoff.
        case entry
        /// The whole request (a proxy or a backend fault may say that of any entry): its own backoff, and at once
        /// after the next answer that delivers something.
        case wholeRequest
        /// The log (per-entry 503: a key the collector does not know yet): the pipeline's pause, no backoff of its own.
        case log
    }

    /// What applying one answer did.
    struct Applied: Sendable {
        var delivered: [UInt64] = []
        var deadLettered = 0
        var retry: [UInt64: Int] = [:]
        var removed: [String: Int] = [:]
        /// Pinned entries refused, with the refusal and what it was about.
        var refused: [UInt64: (reason: String, cause: RefusalCause)] = [:]
        /// The first refusal that is about the log rather than the entry (per-entry 503), if any.
        var logRefusal: String?
    }

    /// Applies per-entry results in one transaction.
    ///
    /// - `accepted` / `duplicate`: the row is deleted.
    /// - `rejected` with 503: the collector cannot verify the entry because of the log's state (the genesis key is
    ///   not trusted yet, a signing key introduced by a rotation it has not accepted): the whole pipeline pauses
    ///   as in an outage, and no entry's attempts grow.
    /// - other retryable codes: the entry's attempts grow and it waits its own backoff; an event moves to the DLQ
    ///   at `maxAttempts`, a pinned entry never does.
    /// - permanent codes: an event moves to the DLQ (or leaves with a record if it was already there); a pinned
    ///   entry is held (``HeldEntry``).
    /// - Parameter metadata: written in the same transaction (the verified receipt, a newly pinned collector key).
    func apply(
        _ response: SyncResponse,
        sent: Set<UInt64>,
        replayed: Set<UInt64>,
        metadata receiptMetadata: [String: String],
        report: inout SyncEngine.CycleReport
    ) async throws {
        let policy = policy
        let wall = clocks.wall()
        let outcome = try await log.deliveryTransaction(scope: .rows(sent.sorted())) { table, sealer in
            var outcome = Applied()
            var removed: [String: Int] = [:]
            for result in response.results where sent.contains(result.seq) {
                guard var item = table.items[result.seq] else { continue }
                let pinned = item.priority >= .system
                let words = "HTTP \(result.code): \(result.reason)"
                switch result.status {
                case .accepted, .duplicate:
                    table.items[result.seq] = nil
                    outcome.delivered.append(result.seq)
                    continue
                case .rejected where result.code == 503:
                    outcome.logRefusal = outcome.logRefusal ?? "seq \(result.seq): \(words)"
                    if pinned { outcome.refused[result.seq] = (words, .log) }
                    continue
                case .rejected where result.isRetryable && (pinned || item.state == .pending):
                    item.attempts += 1
                    if !pinned, item.attempts >= policy.maxAttempts {
                        item.state = .dlq
                        item.reason = "retriesExhausted"
                        item.detail = result.reason
                        item.changedAt = wall
                        outcome.deadLettered += 1
                    } else {
                        outcome.retry[result.seq] = item.attempts
                    }
                case .rejected where result.isRetryable:
                    continue  // a DLQ entry offered again and refused for now: it stays in the DLQ
                case .rejected where pinned:
                    item.state = .pending
                    item.reason = "refused"
                    item.detail = words
                    item.changedAt = wall
                    outcome.refused[result.seq] = (words, .entry)
                case .rejected:
                    if item.state == .dlq || replayed.contains(result.seq) {
                        item.state = .removed
                        removed["rejected", default: 0] += 1
                    } else {
                        item.state = .dlq
                        outcome.deadLettered += 1
                    }
                    item.reason = "rejected"
                    item.detail = words
                    item.changedAt = wall
                }
                table.items[result.seq] = item
            }
            DeliveryStatus.addDropped(removed, stored: sealer.storedMetadata, into: &sealer.metadata)
            outcome.removed = removed
            sealer.metadata[DeliveryStatus.Meta.lastSuccess] = AuditTimestamp(millisecondsSinceEpoch: wall).rfc3339
            sealer.metadata[DeliveryStatus.Meta.lastError] = ""
            sealer.metadata.merge(receiptMetadata) { _, new in new }
            return outcome
        }
        let now = clocks.monotonic()
        if outcome.logRefusal == nil { pipeline.recordAnswer() }
        for (seq, attempts) in outcome.retry {
            notBefore[seq] = now + policy.jitteredDelay(afterFailures: attempts, unit: clocks.random())
        }
        for seq in sent where outcome.retry[seq] == nil { notBefore[seq] = nil }
        for seq in outcome.delivered { release(seq) }
        for (seq, refusal) in outcome.refused.sorted(by: { $0.key < $1.key }) {
            hold(seq, reason: refusal.reason, cause: refusal.cause, at: now)
        }
        if let refusal = outcome.logRefusal {
            // The log's state at the collector, not the entries: pause everything like an outage (the schedule,
            // never spending attempts); an entry refused as part of a whole request is offered with the next batch.
            let delay = pipeline.recordOutage(
                at: now,
                reason: "the collector cannot verify the log yet: \(refusal)",
                retryAfter: nil,
                unit: clocks.random(),
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
        } else if !outcome.delivered.isEmpty {
            offerWholeRequestRefusals()
        }
        report.delivered += outcome.delivered.count
        deliveredTotal += outcome.delivered.count
        report.deadLettered += outcome.deadLettered
        report.retried += outcome.retry.count
        report.removed.merge(outcome.removed, uniquingKeysWith: +)
        if outcome.deadLettered > 0 {
            emit("warning", "entries moved to the dead-letter queue", ["count": String(outcome.deadLettered)])
        }
    }

    /// A single entry the backend refused as a whole request: an event goes to the DLQ (or out with a record if it
    /// was a replay); a pinned entry is held.
    func reject(
        _ seq: UInt64,
        reason: String,
        replayed: Set<UInt64>,
        report: inout SyncEngine.CycleReport
    ) async throws {
        let wall = clocks.wall()
        let verdict = try await log.deliveryTransaction(scope: .rows([seq])) { table, sealer -> RejectVerdict in
            guard var item = table.items[seq] else { return .gone }
            item.detail = reason
            item.changedAt = wall
            if item.priority >= .system {
                item.state = .pending
                item.reason = "refused"
                table.items[seq] = item
                return .held
            }
            let leaves = item.state == .dlq || replayed.contains(seq)
            item.state = leaves ? .removed : .dlq
            item.reason = "rejected"
            table.items[seq] = item
            if leaves {
                DeliveryStatus.addDropped(["rejected": 1], stored: sealer.storedMetadata, into: &sealer.metadata)
            }
            return leaves ? .left : .deadLettered
        }
        switch verdict {
        case .gone: return
        case .held: hold(seq, reason: reason, cause: .wholeRequest, at: clocks.monotonic())
        case .left: report.removed["rejected", default: 0] += 1
        case .deadLettered: report.deadLettered += 1
        }
        emit("warning", "entry refused by the backend", ["seq": String(seq), "reason": reason])
    }

    enum RejectVerdict: Sendable { case gone, held, left, deadLettered }

    /// Holds a refused pinned entry: its own backoff, health `failing`, a critical log line the first time.
    private func hold(_ seq: UInt64, reason: String, cause: RefusalCause, at now: Duration) {
        var entry = held[seq] ?? HeldEntry(refusals: 0, cause: cause, reason: reason)
        entry.refusals += 1
        entry.cause = cause
        entry.reason = reason
        held[seq] = entry
        let delay = min(
            policy.jitteredDelay(afterFailures: entry.refusals, unit: clocks.random()),
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
