public import AuditChain

/// How long an entry is kept in delivery when the queue is full: lower priorities leave first.
public enum DeliveryPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Routine events (catalogue priority `routine`, e.g. a successful unlock).
    case routine = 0
    /// Security-critical events (catalogue priority `critical`: revocation, failure, disable, fallback).
    case critical = 1
    /// Accounted-removal, retention and checkpoint records.
    case system = 2
    /// Genesis, key rotation, and version 2's epoch, close, crash, erasure, hold and key export records: never evicted or expired, the collector
    /// needs them to verify what follows and to tell how the log ends.
    case pinned = 3

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The default priority of an entry of this kind (events take their catalogue priority instead).
    public static func of(kind: RecordKind) -> Self {
        switch kind {
        case .event: .critical
        case .genesis, .keyRotation, .epoch, .close, .crashRecovery, .erasure, .legalHold, .subjectKeyExport: .pinned
        default: .system
        }
    }

    /// The priority of a catalogue priority.
    public init(_ priority: EventCatalogue.Priority) {
        self = priority == .routine ? .routine : .critical
    }

    /// Its name in status output.
    public var name: String {
        switch self {
        case .routine: "routine"
        case .critical: "critical"
        case .system: "system"
        case .pinned: "pinned"
        }
    }
}

/// Where an entry stands in delivery. Delivered entries have no row at all.
public enum DeliveryState: Int, Sendable, Hashable {
    /// Waiting to be sent (or being retried).
    case pending = 0
    /// In the dead-letter queue: rejected permanently or out of retries; offered once more after a good sync.
    case dlq = 1
    /// Left delivery (FIFO, expiry, DLQ overflow, rejection, purge) and not yet sealed into an accounted-removal
    /// record; the record is sealed before the next delivery attempt.
    case removed = 2
}

/// The delivery state of one log entry.
public struct DeliveryItem: Sendable, Hashable {
    /// The entry's sequence number.
    public var seq: UInt64
    /// Its eviction priority.
    public var priority: DeliveryPriority
    /// The entry's sealing time (wall clock, milliseconds since the epoch): its age counts from here.
    public var enqueuedAt: Int64
    /// Attempts the backend answered with a retryable rejection of this entry (outages never count).
    public var attempts: Int
    /// Pending, DLQ or removed.
    public var state: DeliveryState
    /// Why it is in the DLQ, removed or held: a ``DeliveryReason`` raw value (`fifo`, `expired`, `dlqOverflow`,
    /// `rejected`, `purged`, ...), kept as text so a value this build does not know survives.
    public var reason: String
    /// The backend's or operator's words about it.
    public var detail: String
    /// The entry hash (the removal record that accounts for it needs it when it ends a run).
    public var hash: [UInt8]
    /// When the state last changed (wall, milliseconds).
    public var changedAt: Int64

    /// Creates an item.
    public init(
        seq: UInt64,
        priority: DeliveryPriority,
        enqueuedAt: Int64,
        attempts: Int = 0,
        state: DeliveryState = .pending,
        reason: String = "",
        detail: String = "",
        hash: [UInt8],
        changedAt: Int64? = nil
    ) {
        self.seq = seq
        self.priority = priority
        self.enqueuedAt = enqueuedAt
        self.attempts = attempts
        self.state = state
        self.reason = reason
        self.detail = detail
        self.hash = hash
        self.changedAt = changedAt ?? enqueuedAt
    }
}

/// Every entry that has not been delivered, by sequence number: the delivery state beside the log.
///
/// A table may hold only part of the rows (a ``DeliveryScope``): `items` are the rows loaded, and the rows left
/// out are counted when the scope counts them (``DeliveryScope/counts``). A body must not add a row that exists
/// but was not loaded.
public struct DeliveryTable: Sendable, Hashable {
    /// The rows loaded.
    public var items: [UInt64: DeliveryItem]
    /// Rows not loaded, by state.
    public var unloaded: [DeliveryState: Int] = [:]
    /// Pending events (priority below ``DeliveryPriority/system``) among the rows not loaded.
    public var unloadedPendingEvents = 0

    /// Creates a table.
    public init(items: [UInt64: DeliveryItem] = [:]) {
        self.items = items
    }

    /// Loaded rows in a state, in sequence order.
    public func items(in state: DeliveryState) -> [DeliveryItem] {
        items.values.filter { $0.state == state }.sorted { $0.seq < $1.seq }
    }

    /// Number of rows in a state: loaded, plus those the scope counted.
    public func count(_ state: DeliveryState) -> Int {
        items.values.reduce(unloaded[state, default: 0]) { $0 + ($1.state == state ? 1 : 0) }
    }

    /// Pending events (priority below ``DeliveryPriority/system``): loaded, plus those the scope counted. What the
    /// pending limit counts.
    public var pendingEvents: Int {
        items.values.reduce(unloadedPendingEvents) { $0 + ($1.state == .pending && $1.priority < .system ? 1 : 0) }
    }
}
