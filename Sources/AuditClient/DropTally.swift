public import AuditChain

/// Dropped events not yet reported: how many, how many of them critical, and the span of their `occurredAt`.
public struct DropTally: Sendable, Hashable {
    /// How many events were dropped.
    public var count: Int
    /// How many of them had a critical priority.
    public var critical: Int
    /// The earliest `occurredAt` among them.
    public var firstOccurredAt: AuditTimestamp
    /// The latest `occurredAt` among them.
    public var lastOccurredAt: AuditTimestamp

    init(count: Int, critical: Int, firstOccurredAt: AuditTimestamp, lastOccurredAt: AuditTimestamp) {
        self.count = count
        self.critical = critical
        self.firstOccurredAt = firstOccurredAt
        self.lastOccurredAt = lastOccurredAt
    }

    /// A tally of one dropped event.
    init(_ event: AuditEvent, critical: Bool) {
        count = 1
        self.critical = critical ? 1 : 0
        firstOccurredAt = event.occurredAt
        lastOccurredAt = event.occurredAt
    }

    /// Counts one more dropped event.
    mutating func add(_ event: AuditEvent, critical: Bool) {
        count += 1
        if critical { self.critical += 1 }
        firstOccurredAt = min(firstOccurredAt, event.occurredAt)
        lastOccurredAt = max(lastOccurredAt, event.occurredAt)
    }
}
