import AuditChain

/// What `auditctl log` selects: filters on the entry header (sequence number, kind, sealing time), which need no
/// key, and filters on the event (user, device, type, time of occurrence), which need the data keys.
struct LogQuery: Sendable {
    var fromSeq: UInt64 = 0
    var toSeq: UInt64 = .max
    /// nil: every kind.
    var kinds: Set<RecordKind>?
    var sealedSince: AuditTimestamp?
    var sealedUntil: AuditTimestamp?
    var users: Set<String>?
    var devices: Set<String>?
    var types: Set<String>?
    var since: AuditTimestamp?
    var until: AuditTimestamp?

    /// Whether a filter looks inside the encrypted payload (so the data keys are needed).
    var needsDecryption: Bool {
        users != nil || devices != nil || types != nil || since != nil || until != nil
    }

    /// The filters the header alone decides. An event filter also drops every system record (it has no user,
    /// device, type or time of occurrence).
    func matchesHeader(_ header: EntryHeader) -> Bool {
        guard header.seq >= fromSeq, header.seq <= toSeq else { return false }
        if let kinds, !kinds.contains(header.kind) { return false }
        if let sealedSince, header.time < sealedSince { return false }
        if let sealedUntil, header.time >= sealedUntil { return false }
        if needsDecryption, header.kind != .event { return false }
        return true
    }

    /// The filters on the opened event (true when there are none).
    func matchesEvent(_ event: AuditEvent) -> Bool {
        if let users, !users.contains(event.userId) { return false }
        if let devices, !devices.contains(event.deviceId) { return false }
        if let types, !types.contains(event.type) { return false }
        if let since, event.occurredAt < since { return false }
        if let until, event.occurredAt >= until { return false }
        return true
    }

    /// ``matchesEvent(_:)`` of an event recognised in its payload without being decoded (the same fields, compared
    /// as `String`s, as there).
    func matchesEvent(_ event: CanonicalEventPayload) -> Bool {
        if let users, !users.contains(event.userId) { return false }
        if let devices, !devices.contains(event.deviceId) { return false }
        if let types, !types.contains(event.type) { return false }
        if let since, event.occurredAt < since { return false }
        if let until, event.occurredAt >= until { return false }
        return true
    }

    /// Parses a `--since`-like value: an RFC 3339 time, or a date `YYYY-MM-DD` (UTC) meaning the start of that day,
    /// or for an upper bound (`end: true`) the end of that day, so `--until 2026-01-31` includes January 31.
    static func parseBound(_ text: String?, option: String, end: Bool) throws -> AuditTimestamp? {
        guard let text else { return nil }
        if let stamp = AuditTimestamp(rfc3339: text) { return stamp }
        if text.utf8.count == 10, let day = AuditTimestamp(rfc3339: text + "T00:00:00Z") {
            guard end else { return day }
            return AuditTimestamp(millisecondsSinceEpoch: day.millisecondsSinceEpoch + 86_400_000)
        }
        throw CLIError(
            "\(option): \"\(text)\" is not a date: use RFC 3339 (2026-01-15T10:00:00Z, 2026-01-15T11:00:00+01:00) "
                + "or YYYY-MM-DD (UTC)"
        )
    }

    /// Parses `--kind` values (comma-separated or repeated) by their names in docs/FORMAT.md.
    static func parseKinds(_ values: [String]) throws -> Set<RecordKind>? {
        guard !values.isEmpty else { return nil }
        var kinds: Set<RecordKind> = []
        for name in values.flatMap({ $0.split(separator: ",") }).map(String.init) {
            guard let kind = RecordKind.allCases.first(where: { $0.description.lowercased() == name.lowercased() })
            else {
                let names = RecordKind.allCases.map(\.description).joined(separator: ", ")
                throw CLIError("--kind: \"\(name)\" is not a record kind (one of \(names))")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    /// Repeated values as a set (any of them matches); nil when none were given. Not split on commas: a user id
    /// may hold one.
    static func set(_ values: [String]) -> Set<String>? {
        values.isEmpty ? nil : Set(values)
    }
}
