public import AuditChain

extension BusMessage {
    /// Longest line ``init(busctlLine:)`` reads; a longer one is refused unread (busctl prints a message's whole body
    /// on one line, and the watcher needs none of the large ones).
    public static let maxBusctlLineBytes = 1 << 20

    /// Parses one line of `busctl monitor --json=short` (or the answer of `busctl call --json=short`, which has only
    /// a payload's `type` and `data`: see ``arguments(ofBusctlAnswer:)``).
    ///
    /// Total: any input returns a message or nil, never traps. Nil for a line that is not one JSON object, lacks
    /// `type` or `cookie`, names an unknown message type, or holds a value the strict parser refuses (fractions,
    /// integers past 2^53, duplicate keys, invalid UTF-8): such messages are not fprintd's.
    /// - Parameter line: the line's bytes, with or without its newline.
    public init?(busctlLine line: some Collection<UInt8>) {
        guard line.count <= Self.maxBusctlLineBytes,
            let value = try? JSONValue(parsing: line),
            let object = value.objectValue,
            let kind = object["type"]?.stringValue.flatMap(Kind.init(rawValue:)),
            let cookie = object["cookie"].flatMap(Self.unsigned)
        else { return nil }
        self.init(kind: kind, cookie: cookie)
        replyCookie = object["reply_cookie"].flatMap(Self.unsigned)
        timestampMicros = object["timestamp-realtime"]?.integerValue
        sender = object["sender"]?.stringValue
        destination = object["destination"]?.stringValue
        path = object["path"]?.stringValue
        interface = object["interface"]?.stringValue
        member = object["member"]?.stringValue
        errorName = object["error_name"]?.stringValue
        arguments = object["payload"].flatMap(Self.arguments(ofPayload:)) ?? []
    }

    /// The arguments of `busctl call --json=short`'s answer (`{"type": "s", "data": [":1.3"]}`), or nil when the
    /// text is not such an object.
    public static func arguments(ofBusctlAnswer text: some Collection<UInt8>) -> [JSONValue]? {
        guard text.count <= maxBusctlLineBytes, let value = try? JSONValue(parsing: text) else { return nil }
        return arguments(ofPayload: value)
    }

    private static func arguments(ofPayload payload: JSONValue) -> [JSONValue]? {
        guard case .array(let data)? = payload.objectValue?["data"] else { return nil }
        return data
    }

    private static func unsigned(_ value: JSONValue) -> UInt64? {
        guard let integer = value.integerValue, integer >= 0 else { return nil }
        return UInt64(integer)
    }
}
