public import AuditChain

/// Why the client dropped events it could not deliver (the `reason` of an `AUDIT_EVENTS_DROPPED` report).
public enum DropReason: String, Sendable, Hashable, CaseIterable {
    /// The buffer was full while the agent was unavailable: the oldest routine event (critical only when no routine
    /// one was left) made room for a newer one.
    case overflow
    /// The agent refused a buffered event as invalid when it came back (it cannot ever be written).
    case refused
}

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

/// A drop report once it was offered to the agent: an `AUDIT_EVENTS_DROPPED` event whose content, idempotency key
/// and `occurredAt` never change again, so a retry of it is de-duplicated; drops after it go into the next report.
struct DropReport: Sendable, Hashable {
    var reason: DropReason
    var event: AuditEvent

    /// The event type of drop reports (docs/CATALOGUE.md).
    static let eventType = "AUDIT_EVENTS_DROPPED"

    /// The report of `tally`, as an event of `userId` on `deviceId` at `now` with key `key`.
    init(reason: DropReason, tally: DropTally, userId: String, deviceId: String, now: AuditTimestamp, key: String) {
        self.reason = reason
        event = AuditEvent(
            type: Self.eventType,
            occurredAt: now,
            userId: userId,
            deviceId: deviceId,
            attributes: [
                "count": .integer(Int64(tally.count)), "critical": .integer(Int64(tally.critical)),
                "reason": .string(reason.rawValue), "firstOccurredAt": .string(tally.firstOccurredAt.rfc3339),
                "lastOccurredAt": .string(tally.lastOccurredAt.rfc3339),
            ],
            idempotencyKey: key
        )
    }

    init(reason: DropReason, event: AuditEvent) {
        self.reason = reason
        self.event = event
    }
}
