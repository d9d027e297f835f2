import AuditChain

/// What the catalogue suites share: an event of a type with attributes, and the catalogue's verdict on it.
protocol CatalogueSuite {
    var catalogue: EventCatalogue { get }
}

extension CatalogueSuite {
    /// An event of `type` with `attributes`, the other members fixed.
    func event(_ type: String, _ attributes: [String: JSONValue]) -> AuditEvent {
        AuditEvent(
            type: type,
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
            userId: "u1",
            deviceId: "d1",
            attributes: attributes,
            idempotencyKey: "k1"
        )
    }

    /// Why the catalogue refuses `event`, nil when it accepts it.
    func error(_ event: AuditEvent) -> AuditEventError? {
        do {
            try catalogue.validate(event)
            return nil
        } catch {
            return error
        }
    }
}
