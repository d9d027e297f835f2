/// One security event as producers report it; sealed into an entry's encrypted payload.
public struct AuditEvent: Sendable, Hashable {
    /// The catalogue type, e.g. `BIOMETRIC_AUTH_FAILURE`.
    public var type: String
    /// When the event happened, as the producer says.
    public var occurredAt: AuditTimestamp
    /// The user the event concerns.
    public var userId: String
    /// The device the event happened on.
    public var deviceId: String
    /// Typed attributes the catalogue declares for the type.
    public var attributes: [String: JSONValue]
    /// A producer-chosen key that identifies this event across retries (de-duplication).
    public var idempotencyKey: String

    /// Version of the event payload layout (the `v` member).
    public static let payloadVersion: Int64 = 1

    /// Creates an event.
    public init(
        type: String,
        occurredAt: AuditTimestamp,
        userId: String,
        deviceId: String,
        attributes: [String: JSONValue] = [:],
        idempotencyKey: String
    ) {
        self.type = type
        self.occurredAt = occurredAt
        self.userId = userId
        self.deviceId = deviceId
        self.attributes = attributes
        self.idempotencyKey = idempotencyKey
    }

    /// The event as a canonical JSON object (the plaintext that is sealed).
    public var jsonValue: JSONValue {
        .object([
            "v": .integer(Self.payloadVersion),
            "type": .string(type),
            "occurredAt": .string(occurredAt.rfc3339),
            "userId": .string(userId),
            "deviceId": .string(deviceId),
            "attributes": .object(attributes),
            "idempotencyKey": .string(idempotencyKey),
        ])
    }

    /// The canonical payload bytes (docs/FORMAT.md, "Event payload").
    ///
    /// Written directly, members in the canonical order (their names sorted by UTF-8 bytes: attributes,
    /// deviceId, idempotencyKey, occurredAt, type, userId, v): byte for byte `jsonValue.canonicalBytes`, without
    /// building and sorting the outer object.
    public var canonicalPayload: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + type.utf8.count + userId.utf8.count + deviceId.utf8.count + 16 * attributes.count)
        out.append(contentsOf: #"{"attributes":"#.utf8)
        JSONValue.appendObject(attributes, to: &out)
        out.append(contentsOf: #","deviceId":"#.utf8)
        JSONValue.appendString(deviceId, to: &out)
        out.append(contentsOf: #","idempotencyKey":"#.utf8)
        JSONValue.appendString(idempotencyKey, to: &out)
        out.append(contentsOf: #","occurredAt":""#.utf8)
        occurredAt.appendRFC3339(to: &out)
        out.append(contentsOf: #"","type":"#.utf8)
        JSONValue.appendString(type, to: &out)
        out.append(contentsOf: #","userId":"#.utf8)
        JSONValue.appendString(userId, to: &out)
        out.append(contentsOf: #","v":"#.utf8)
        out.append(contentsOf: String(Self.payloadVersion).utf8)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Decodes an opened event payload; strict: exactly the members of the payload layout.
    /// - Throws: ``AuditEventError`` naming the member that is wrong.
    public init(canonicalPayload bytes: [UInt8]) throws(AuditEventError) {
        self = try Self.decoding(payload: bytes).event
    }

    /// Decodes an opened event payload like ``init(canonicalPayload:)`` and says whether `bytes` are exactly the
    /// event's ``canonicalPayload``, found while parsing (``JSONValue/parsingCanonically(_:)``) instead of by encoding
    /// the event again: the JSON is canonical and `occurredAt` is in its canonical form.
    /// - Throws: ``AuditEventError`` naming the member that is wrong.
    public static func decoding(
        payload bytes: [UInt8]
    ) throws(AuditEventError) -> (event: AuditEvent, isCanonical: Bool) {
        let value: JSONValue
        let isCanonicalJSON: Bool
        do {
            (value, isCanonicalJSON) = try JSONValue.parsingCanonically(bytes)
        } catch {
            throw AuditEventError(error.isInvalidUTF8 ? .invalidUTF8 : .malformedJSON, error.description)
        }
        guard case .object(let members) = value else {
            throw AuditEventError(.wrongType, "the payload is \(value.typeName), expected object")
        }
        let expected: Set = ["v", "type", "occurredAt", "userId", "deviceId", "attributes", "idempotencyKey"]
        if let extra = members.keys.sorted().first(where: { !expected.contains($0) }) {
            throw AuditEventError(.unknownAttribute, field: extra, "unexpected payload member")
        }
        guard members["v"] == .integer(Self.payloadVersion) else {
            throw AuditEventError(.outOfRange, field: "v", "unsupported payload version")
        }
        let fields = try EventFields(members, allowDefaults: false)
        let event = AuditEvent(
            type: fields.type,
            occurredAt: fields.occurredAt!,
            userId: fields.userId,
            deviceId: fields.deviceId,
            attributes: fields.attributes,
            idempotencyKey: fields.idempotencyKey!
        )
        let occurredAtText = members["occurredAt"]?.stringValue ?? ""
        return (event, isCanonicalJSON && AuditTimestamp.isCanonicalText(occurredAtText))
    }
}

/// The members shared by the payload layout and the producer input (`auditctl emit --json`, ingest API).
struct EventFields {
    var type: String
    var userId: String
    var deviceId: String
    var attributes: [String: JSONValue]
    var occurredAt: AuditTimestamp?
    var idempotencyKey: String?

    init(_ members: [String: JSONValue], allowDefaults: Bool) throws(AuditEventError) {
        func string(_ name: String, eventType: String?) throws(AuditEventError) -> String? {
            guard let value = members[name] else { return nil }
            guard case .string(let text) = value else {
                throw AuditEventError(
                    .wrongType,
                    eventType: eventType,
                    field: name,
                    "expected string, got \(value.typeName)"
                )
            }
            return text
        }
        guard let type = try string("type", eventType: nil) else {
            throw AuditEventError(.missingField, field: "type", "required field is missing")
        }
        self.type = type
        guard let userId = try string("userId", eventType: type) else {
            throw AuditEventError(.missingField, eventType: type, field: "userId", "required field is missing")
        }
        self.userId = userId
        guard let deviceId = try string("deviceId", eventType: type) else {
            throw AuditEventError(.missingField, eventType: type, field: "deviceId", "required field is missing")
        }
        self.deviceId = deviceId
        switch members["attributes"] {
        case .object(let attributes): self.attributes = attributes
        case nil where allowDefaults: self.attributes = [:]
        case nil:
            throw AuditEventError(.missingField, eventType: type, field: "attributes", "required field is missing")
        case let other?:
            throw AuditEventError(
                .wrongType,
                eventType: type,
                field: "attributes",
                "expected object, got \(other.typeName)"
            )
        }
        if let text = try string("occurredAt", eventType: type) {
            guard let stamp = AuditTimestamp(rfc3339: text) else {
                throw AuditEventError(
                    .outOfRange,
                    eventType: type,
                    field: "occurredAt",
                    "not an RFC 3339 date-time between 1970 and 9999: \"\(text)\""
                )
            }
            self.occurredAt = stamp
        } else if !allowDefaults {
            throw AuditEventError(.missingField, eventType: type, field: "occurredAt", "required field is missing")
        }
        self.idempotencyKey = try string("idempotencyKey", eventType: type)
        if idempotencyKey == nil, !allowDefaults {
            throw AuditEventError(.missingField, eventType: type, field: "idempotencyKey", "required field is missing")
        }
    }
}
