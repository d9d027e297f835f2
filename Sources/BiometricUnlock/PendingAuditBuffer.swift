public import AuditChain

/// Events the audit sink has not taken yet, oldest first, bounded: when full, the oldest is dropped and returned so
/// the caller can report it.
public struct PendingAuditBuffer: Sendable, Hashable {
    /// Most events kept (at least 1).
    public let capacity: Int
    /// The events, oldest first.
    public private(set) var events: [AuditEvent] = []

    /// Creates an empty buffer.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The number of events waiting.
    public var count: Int { events.count }
    /// Whether nothing is waiting.
    public var isEmpty: Bool { events.isEmpty }
    /// The oldest event.
    public var first: AuditEvent? { events.first }

    /// Appends an event; returns the oldest event if it had to be dropped to make room.
    public mutating func append(_ event: AuditEvent) -> AuditEvent? {
        var dropped: AuditEvent?
        if events.count >= capacity { dropped = events.removeFirst() }
        events.append(event)
        return dropped
    }

    /// Removes the event with this idempotency key (delivered); returns whether it was there.
    @discardableResult
    public mutating func remove(idempotencyKey: String) -> Bool {
        guard let index = events.firstIndex(where: { $0.idempotencyKey == idempotencyKey }) else { return false }
        events.remove(at: index)
        return true
    }
}
