/// What a refusal of a pinned entry was about, which decides when the entry is offered again.
public enum RefusalCause: Sendable, Hashable {
    /// The collector's verdict on the entry (400, 409, 422 per entry): its own backoff.
    case entry
    /// The whole request (a proxy or a backend fault may say that of any entry): its own backoff, and at once
    /// after the next answer that delivers something.
    case wholeRequest
    /// The log (per-entry 503: a key the collector does not know yet): the pipeline's pause, no backoff of its own.
    case log
}

/// The fate ``DeliveryDecider`` decides for one entry. ``row(from:at:)`` says how its delivery row changes.
public enum DeliveryFate: Sendable, Hashable {
    /// Accepted or already held by the collector: the row is deleted.
    case delivered
    /// Refused for now (408, 429, 5xx per entry): `attempts` is stored and the entry waits its own backoff.
    case retry(attempts: Int)
    /// To the dead-letter queue, with `attempts` stored.
    case deadLettered(DeliveryReason, attempts: Int, detail: String)
    /// Out of delivery: the row waits (state removed) for the accounted-removal record that says so.
    case removed(DeliveryReason, detail: String)
    /// A pinned entry the collector refused: it stays pending and is held (offered again, health `failing`).
    /// `reason` is the collector's words; a refusal about the log (``RefusalCause/log``) leaves the row as it is.
    case held(RefusalCause, reason: String)
    /// An event refused because of the log's state at the collector (per-entry 503): the row stays as it is, the
    /// pipeline pauses, no attempt is spent.
    case waitsForLog
    /// A DLQ entry offered once more and refused for now: it stays in the DLQ as it is.
    case staysInDLQ
    /// Back from the DLQ to pending, its attempts, reason and detail reset (`auditctl dlq replay`).
    case requeued

    /// The row after this fate, written at wall time `now` (milliseconds); nil when the row is deleted.
    public func row(from item: DeliveryItem, at now: Int64) -> DeliveryItem? {
        var item = item
        switch self {
        case .delivered:
            return nil
        case .retry(let attempts):
            item.attempts = attempts
            return item
        case .deadLettered(let reason, let attempts, let detail):
            item.attempts = attempts
            item.state = .dlq
            item.reason = reason.rawValue
            item.detail = detail
        case .removed(let reason, let detail):
            item.state = .removed
            item.reason = reason.rawValue
            item.detail = detail
        case .held(.log, _), .waitsForLog, .staysInDLQ:
            return item
        case .held(_, let reason):
            item.state = .pending
            item.reason = DeliveryReason.refused.rawValue
            item.detail = reason
        case .requeued:
            item.state = .pending
            item.attempts = 0
            item.reason = ""
            item.detail = ""
        }
        item.changedAt = now
        return item
    }
}

/// What one answer (or an operator's action on the DLQ) decides for the entries it concerns: a pure value that the
/// engine, or ``AuditLog``, writes in one transaction and then acts on (docs/DELIVERY.md, "Outage versus
/// rejection" and "Pinned entries").
public struct DeliveryOutcome: Sendable, Hashable {
    /// One entry's fate.
    public struct Decision: Sendable, Hashable {
        /// The entry.
        public var seq: UInt64
        /// Its fate.
        public var fate: DeliveryFate

        /// Creates a decision.
        public init(seq: UInt64, fate: DeliveryFate) {
            self.seq = seq
            self.fate = fate
        }
    }

    /// The decisions, in the order they are written (an answer that names an entry twice decides it twice).
    public var decisions: [Decision] = []
    /// The first refusal that is about the log rather than an entry (a per-entry 503), if any: the pipeline pauses
    /// as in an outage.
    public var logRefusal: String?

    /// Creates an outcome.
    public init(decisions: [Decision] = [], logRefusal: String? = nil) {
        self.decisions = decisions
        self.logRefusal = logRefusal
    }

    /// The entries delivered, in answer order.
    public var delivered: [UInt64] {
        decisions.compactMap { $0.fate == .delivered ? $0.seq : nil }
    }

    /// Entries moved to the DLQ.
    public var deadLettered: Int {
        decisions.reduce(0) {
            if case .deadLettered = $1.fate { $0 + 1 } else { $0 }
        }
    }

    /// Entries that wait their own backoff, with their attempts.
    public var retry: [UInt64: Int] {
        var retry: [UInt64: Int] = [:]
        for decision in decisions {
            if case .retry(let attempts) = decision.fate { retry[decision.seq] = attempts }
        }
        return retry
    }

    /// Entries that left delivery, by reason.
    public var removed: [DeliveryReason: Int] {
        var removed: [DeliveryReason: Int] = [:]
        for decision in decisions {
            if case .removed(let reason, _) = decision.fate { removed[reason, default: 0] += 1 }
        }
        return removed
    }

    /// ``removed`` by the reasons' names, as the dropped counters and the cycle report count them.
    public var removedByName: [String: Int] {
        Dictionary(uniqueKeysWithValues: removed.map { ($0.key.rawValue, $0.value) })
    }

    /// Pinned entries refused (held), with the last refusal of each and what it was about.
    public var held: [UInt64: (reason: String, cause: RefusalCause)] {
        var held: [UInt64: (reason: String, cause: RefusalCause)] = [:]
        for decision in decisions {
            if case .held(let cause, let reason) = decision.fate { held[decision.seq] = (reason, cause) }
        }
        return held
    }

    /// The entries the decisions name, in order, each once.
    public var seqs: [UInt64] {
        var seen: Set<UInt64> = []
        return decisions.compactMap { seen.insert($0.seq).inserted ? $0.seq : nil }
    }

    /// Writes the decisions into `table` at wall time `now`, in order. A decision for a row the table does not hold
    /// is skipped (the deciders decide only for rows they were given).
    public func write(into table: inout DeliveryTable, at now: Int64) {
        for decision in decisions {
            guard let item = table.items[decision.seq] else { continue }
            table.items[decision.seq] = decision.fate.row(from: item, at: now)
        }
    }
}
