public import AuditStore
public import AuditWire

/// The fates the collector's answers decide (``SyncEngine`` writes them).
extension DeliveryDecider {
    /// The fates of the entries a per-entry answer names.
    ///
    /// - `accepted` / `duplicate`: delivered.
    /// - `rejected` with 503: the collector cannot verify the entry because of the log's state (the genesis key is
    ///   not trusted yet, a signing key introduced by a rotation it has not accepted): ``DeliveryOutcome/logRefusal``
    ///   is set (the whole pipeline pauses as in an outage) and no entry's attempts grow; a pinned entry is held
    ///   for the log's sake.
    /// - other retryable codes: a pending (or pinned) entry's attempts grow and it waits its own backoff; an event
    ///   moves to the DLQ at `maxAttempts` (``DeliveryReason/retriesExhausted``), a pinned entry never does. An
    ///   event offered again from the DLQ stays there.
    /// - permanent codes: an event moves to the DLQ, or leaves with a record if it was already there or was
    ///   offered from there (``DeliveryReason/rejected``); a pinned entry is held.
    ///
    /// Results for entries not in `sent`, or without a row in `rows`, are ignored. An entry named twice is decided
    /// twice, the second time from its row as the first decision left it.
    /// - Parameters:
    ///   - response: the collector's answer.
    ///   - rows: the delivery rows of the entries sent.
    ///   - sent: the entries of the request.
    ///   - replayed: the entries of the request offered from the DLQ.
    ///   - policy: the limits (`maxAttempts`).
    public static func decide(
        _ response: SyncResponse,
        rows: [UInt64: DeliveryItem],
        sent: Set<UInt64>,
        replayed: Set<UInt64>,
        policy: DeliveryPolicy
    ) -> DeliveryOutcome {
        var rows = rows
        var outcome = DeliveryOutcome()
        for result in response.results where sent.contains(result.seq) {
            guard let item = rows[result.seq] else { continue }
            let fate = fate(of: item, for: result, replayed: replayed.contains(result.seq), policy: policy)
            if result.status == .rejected, result.code == 503, outcome.logRefusal == nil {
                outcome.logRefusal = "seq \(result.seq): \(words(result))"
            }
            outcome.decisions.append(.init(seq: result.seq, fate: fate))
            // Written at time 0 here: only the state the next decision reads matters, not the time of the change.
            rows[result.seq] = fate.row(from: item, at: 0)
        }
        return outcome
    }

    /// The fate of one entry for one per-entry result (``decide(_:rows:sent:replayed:policy:)``).
    /// - Parameter replayed: whether the entry was offered from the DLQ.
    public static func fate(
        of item: DeliveryItem,
        for result: SyncEntryResult,
        replayed: Bool,
        policy: DeliveryPolicy
    ) -> DeliveryFate {
        let pinned = item.priority >= .system
        switch result.status {
        case .accepted, .duplicate:
            return .delivered
        case .rejected where result.code == 503:
            return pinned ? .held(.log, reason: words(result)) : .waitsForLog
        case .rejected where result.isRetryable && (pinned || item.state == .pending):
            let attempts = item.attempts + 1
            if !pinned, attempts >= policy.maxAttempts {
                return .deadLettered(.retriesExhausted, attempts: attempts, detail: result.reason)
            }
            return .retry(attempts: attempts)
        case .rejected where result.isRetryable:
            return .staysInDLQ
        case .rejected where pinned:
            return .held(.entry, reason: words(result))
        case .rejected:
            return refused(item, reason: words(result), replayed: replayed)
        }
    }

    /// The fate of a single entry the backend refused as a whole request (400, 409, 422 for a batch of one): an
    /// event goes to the DLQ (or out with a record if it was in the DLQ or offered from there); a pinned entry is
    /// held (``RefusalCause/wholeRequest``).
    /// - Parameters:
    ///   - item: the entry's row; nil when it has none (delivered or removed meanwhile): no decision.
    ///   - reason: the backend's words (the classified refusal).
    ///   - replayed: whether the entry was offered from the DLQ.
    public static func decide(
        refusalOf item: DeliveryItem?,
        reason: String,
        replayed: Bool
    ) -> DeliveryOutcome {
        guard let item else { return DeliveryOutcome() }
        let fate: DeliveryFate =
            item.priority >= .system
            ? .held(.wholeRequest, reason: reason) : refused(item, reason: reason, replayed: replayed)
        return DeliveryOutcome(decisions: [.init(seq: item.seq, fate: fate)])
    }

    /// A permanent refusal of an event: to the DLQ, or out of delivery when it comes from there.
    private static func refused(_ item: DeliveryItem, reason: String, replayed: Bool) -> DeliveryFate {
        item.state == .dlq || replayed
            ? .removed(.rejected, detail: reason)
            : .deadLettered(.rejected, attempts: item.attempts, detail: reason)
    }

    /// How a per-entry refusal is described in rows, holds and log lines.
    static func words(_ result: SyncEntryResult) -> String {
        "HTTP \(result.code): \(result.reason)"
    }
}
