/// An event as a producer's request gave it: the event, and whether the producer left `occurredAt` out, so that the
/// ingest stamped it with the time of arrival.
///
/// The log's de-duplication compares a retry with what the producer sent (docs/CATALOGUE.md, "Idempotency keys and
/// retries"): a request that left `occurredAt` out, repeated, is the same event even though each arrival is
/// stamped with its own time.
public struct ProducerEvent: Sendable, Hashable {
    /// The event, `occurredAt` included (the producer's, or the stamp).
    public var event: AuditEvent {
        // A changed event is not the one validated.
        didSet { validated = nil }
    }
    /// True when the producer omitted `occurredAt` and `event.occurredAt` is the time of ingest.
    public var occurredAtStamped: Bool
    /// The event as the catalogue that decoded it validated it, its canonical payload encoded once
    /// (``AuditEvent/decodeProducerInput(_:catalogue:now:makeIdempotencyKey:)``); nil for an event not validated yet.
    /// A log whose catalogue decoded the request appends it without validating or encoding it again.
    public internal(set) var validated: ValidatedEvent?

    /// Equal when the event and the stamp flag are: whether it was validated yet does not change what it is.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.event == rhs.event && lhs.occurredAtStamped == rhs.occurredAtStamped
    }

    /// Hashes the event and the stamp flag, as ``==(_:_:)`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(event)
        hasher.combine(occurredAtStamped)
    }

    /// Wraps an event; `occurredAtStamped` says whether its `occurredAt` is the ingest's stamp.
    public init(_ event: AuditEvent, occurredAtStamped: Bool = false) {
        self.event = event
        self.occurredAtStamped = occurredAtStamped
    }

    /// Decodes one producer input object (``AuditEvent/init(input:now:makeIdempotencyKey:)``), saying whether
    /// `occurredAt` was stamped with `now`.
    /// - Throws: ``AuditEventError`` naming the member that is wrong.
    public init(
        input value: JSONValue,
        now: AuditTimestamp,
        makeIdempotencyKey: () -> String
    ) throws(AuditEventError) {
        guard case .object(let members) = value else {
            throw AuditEventError(.wrongType, "an event must be a JSON object, got \(value.typeName)")
        }
        let fields = try EventFields(members, allowDefaults: true)
        if let extra = members.keys.sorted().first(where: { !AuditEvent.inputMembers.contains($0) }) {
            throw AuditEventError(
                .unknownAttribute,
                eventType: fields.type,
                field: extra,
                "unknown member; event attributes belong inside \"attributes\""
            )
        }
        let event = AuditEvent(
            type: fields.type,
            occurredAt: fields.occurredAt ?? now,
            userId: fields.userId,
            deviceId: fields.deviceId,
            attributes: fields.attributes,
            idempotencyKey: fields.idempotencyKey ?? makeIdempotencyKey()
        )
        self.init(event, occurredAtStamped: fields.occurredAt == nil)
    }
}
