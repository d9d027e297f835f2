import AuditChain

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

    /// The number of drops it reports (its `count`, which may come from the buffer file: never negative).
    var count: Int { Int(clamping: max(0, event.attributes["count"]?.integerValue ?? 0)) }
}
