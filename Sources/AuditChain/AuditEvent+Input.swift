/// Producer input: the event JSON of `auditctl emit --json` and the ingest API.
///
/// `{"type": ..., "userId": ..., "deviceId": ..., "attributes": {...}}` with optional `occurredAt` (RFC 3339)
/// and `idempotencyKey`. Missing optional members are filled from the injected clock and key generator.
extension AuditEvent {
    /// The members producer input may carry.
    public static let inputMembers: Set<String> = [
        "type", "userId", "deviceId", "attributes", "occurredAt", "idempotencyKey",
    ]

    /// Decodes one producer input object.
    /// - Parameters:
    ///   - value: the parsed JSON object.
    ///   - now: the time to use when `occurredAt` is absent.
    ///   - makeIdempotencyKey: generates a key when `idempotencyKey` is absent.
    /// - Throws: ``AuditEventError`` naming the member that is wrong.
    public init(
        input value: JSONValue,
        now: AuditTimestamp,
        makeIdempotencyKey: () -> String
    ) throws(AuditEventError) {
        self = try ProducerEvent(input: value, now: now, makeIdempotencyKey: makeIdempotencyKey).event
    }

    /// Decodes producer input that is either one JSON object or JSON Lines (one object per non-blank line),
    /// and validates every event against the catalogue. All or nothing: the first bad line throws.
    /// - Throws: ``AuditEventError`` with ``AuditEventError/line`` set for JSON Lines input.
    public static func decodeInput(
        _ bytes: [UInt8],
        catalogue: EventCatalogue,
        now: AuditTimestamp,
        makeIdempotencyKey: () -> String
    ) throws(AuditEventError) -> [AuditEvent] {
        try decodeProducerInput(bytes, catalogue: catalogue, now: now, makeIdempotencyKey: makeIdempotencyKey)
            .map(\.event)
    }

    /// ``decodeInput(_:catalogue:now:makeIdempotencyKey:)``, saying for each event whether its `occurredAt` was
    /// stamped with `now` (the producer left it out): what the log's de-duplication compares a retry with.
    /// - Throws: ``AuditEventError`` with ``AuditEventError/line`` set for JSON Lines input.
    public static func decodeProducerInput(
        _ bytes: [UInt8],
        catalogue: EventCatalogue,
        now: AuditTimestamp,
        makeIdempotencyKey: () -> String
    ) throws(AuditEventError) -> [ProducerEvent] {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw AuditEventError(.invalidUTF8, "input is not valid UTF-8")
        }
        // A single (possibly pretty-printed) object first; otherwise JSON Lines.
        if let single = try? JSONValue(parsing: bytes) {
            var event = try ProducerEvent(input: single, now: now, makeIdempotencyKey: makeIdempotencyKey)
            event.validated = try catalogue.validated(event.event)
            return [event]
        }
        var events: [ProducerEvent] = []
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let number = index + 1
            guard line.contains(where: { ![0x20, 0x09, 0x0d].contains($0) }) else { continue }
            do throws(AuditEventError) {
                let value: JSONValue
                do {
                    value = try JSONValue(parsing: line)
                } catch {
                    throw AuditEventError(error.isInvalidUTF8 ? .invalidUTF8 : .malformedJSON, error.description)
                }
                var event = try ProducerEvent(input: value, now: now, makeIdempotencyKey: makeIdempotencyKey)
                event.validated = try catalogue.validated(event.event)
                events.append(event)
            } catch {
                var located = error
                located.line = number
                throw located
            }
        }
        guard !events.isEmpty else { throw AuditEventError(.missingField, "the input holds no event") }
        return events
    }
}
