import AuditChain

/// How `log` and `show` present an entry: header facts always, the decrypted event only when asked.
struct EntryView: Sendable {
    let entry: SealedEntry
    /// The opened event, when decryption was asked for and succeeded.
    let event: AuditEvent?
    /// Why the payload could not be opened, when decryption was asked for.
    let openError: String?
    /// The opened plaintext when it is exactly `event.canonicalPayload` (as sealed by this implementation), so that
    /// printing the event copies it instead of encoding the event again; nil otherwise.
    private let canonicalPlaintext: [UInt8]?

    /// - Parameter erased: the content key ids erasure records destroyed, with each record's seq: an event under one
    ///   of them with no key is shown as erased, not as unreadable.
    init(_ entry: SealedEntry, dataKeys: [KeyID: DataKey]?, erased: [KeyID: UInt64] = [:]) {
        guard let dataKeys, entry.header.kind == .event else {
            self.init(entry, event: nil, openError: nil, canonicalPlaintext: nil)
            return
        }
        guard let key = dataKeys[entry.header.dataKeyId] else {
            if entry.header.isSubjectSealed, let seq = erased[entry.header.dataKeyId] {
                self.init(entry, event: nil, openError: nil, canonicalPlaintext: nil, erasedAt: seq)
                return
            }
            self.init(entry, event: nil, openError: "no data key \(entry.header.dataKeyId)", canonicalPlaintext: nil)
            return
        }
        do {
            self.init(entry, opened: try entry.openPayload(with: key))
        } catch {
            self.init(entry, event: nil, openError: "cannot open: \(error)", canonicalPlaintext: nil)
        }
    }

    /// The view of an event entry whose payload was opened to `plaintext`.
    init(_ entry: SealedEntry, opened plaintext: [UInt8]) {
        do {
            let (event, isCanonical) = try AuditEvent.decoding(payload: plaintext)
            self.init(entry, event: event, openError: nil, canonicalPlaintext: isCanonical ? plaintext : nil)
        } catch {
            self.init(entry, event: nil, openError: "cannot open: \(error)", canonicalPlaintext: nil)
        }
    }

    private init(
        _ entry: SealedEntry,
        event: AuditEvent?,
        openError: String?,
        canonicalPlaintext: [UInt8]?,
        erasedAt: UInt64? = nil
    ) {
        self.entry = entry
        self.event = event
        self.openError = openError
        self.canonicalPlaintext = canonicalPlaintext
        self.erasedAt = erasedAt
    }

    /// The seq of the erasure record that destroyed the event's key, when it was and no key was given.
    let erasedAt: UInt64?

    /// The system record, for plaintext kinds.
    var record: SystemRecord? {
        guard entry.header.kind != .event else { return nil }
        return try? SystemRecord(kind: entry.header.kind, payload: entry.payload)
    }

    var json: JSONValue {
        let header = entry.header
        var members: [String: JSONValue] = [
            "seq": .unsigned(header.seq),
            "time": .string(header.time.rfc3339),
            "kind": .string(header.kind.description),
            "signingKeyId": .string(header.signingKeyId.hex),
            "entryHash": .string(Hex.encode(entry.entryHash)),
            "size": .integer(Int64(entry.serializedCount)),
        ]
        if header.kind == .event { members["dataKeyId"] = .string(header.dataKeyId.hex) }
        if let event { members["event"] = event.jsonValue }
        if let openError { members["error"] = .string(openError) }
        if let erasedAt { members["erasedAt"] = .unsigned(erasedAt) }
        if let record = recordJSON { members["record"] = record }
        return .object(members)
    }

    /// `json.canonicalBytes`, written directly for an event (what a large query prints a million times): the
    /// members in canonical order (their names sorted by UTF-8 bytes), the opened event as its canonical payload
    /// (byte for byte `event.jsonValue.canonicalBytes`), no dictionary built or sorted. Other kinds go through `json`.
    var jsonLine: [UInt8] {
        var times = RecentTime()
        return jsonLine(times: &times)
    }

    /// ``jsonLine``, the sealing time rendered through `times` (consecutive entries often share it).
    func jsonLine(times: inout RecentTime) -> [UInt8] {
        guard entry.header.kind == .event else { return json.canonicalBytes }
        let line = Self.eventJSONLine(
            entry,
            event: event.map { canonicalPlaintext ?? $0.canonicalPayload },
            openError: openError,
            erasedAt: erasedAt,
            times: &times
        )
        assert(line == json.canonicalBytes, "EntryView.jsonLine differs from json.canonicalBytes")
        return line
    }

    /// The JSON line of an event entry: `event` is the opened event's canonical payload (nil when not shown),
    /// `openError` why it could not be opened, `erasedAt` the erasure record that destroyed its key; the members in
    /// canonical order.
    static func eventJSONLine(
        _ entry: SealedEntry,
        event: [UInt8]?,
        openError: String?,
        erasedAt: UInt64? = nil,
        times: inout RecentTime
    ) -> [UInt8] {
        let header = entry.header
        var out: [UInt8] = []
        out.reserveCapacity(320 + entry.payload.count)
        // Hex digits, decimal numbers and RFC 3339 times need no escaping; the rest goes through JSONValue.
        out += #"{"dataKeyId":""#.utf8
        appendHex(header.dataKeyId.bytes, to: &out)
        out += #"","entryHash":""#.utf8
        appendHex(entry.entryHash, to: &out)
        out += #"""#.utf8
        if let erasedAt {
            out += #","erasedAt":"#.utf8
            out += String(erasedAt).utf8
        }
        if let openError {
            out += #","error":"#.utf8
            out += JSONValue.string(openError).canonicalBytes
        }
        if let event {
            out += #","event":"#.utf8
            out += event
        }
        out += #","kind":"event","seq":"#.utf8
        out += String(header.seq).utf8
        out += #","signingKeyId":""#.utf8
        appendHex(header.signingKeyId.bytes, to: &out)
        out += #"","size":"#.utf8
        out += String(entry.serializedCount).utf8
        out += #","time":""#.utf8
        out += times.rfc3339(header.time)
        out += #""}"#.utf8
        return out
    }

    /// Appends `bytes` as lowercase hexadecimal digits (what `Hex.encode` gives, without a String in between).
    private static func appendHex(_ bytes: [UInt8], to out: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0f)])
            }
        }
    }

    /// A system record's plaintext payload as JSON (nil for events and for a payload that is not JSON).
    var recordJSON: JSONValue? {
        guard entry.header.kind != .event, let text = String(validating: entry.payload, as: UTF8.self) else {
            return nil
        }
        return try? JSONValue(parsing: Array(text.utf8))
    }

    var line: String {
        let header = entry.header
        var text = "\(header.seq)\t\(header.time.rfc3339)\t\(header.kind)"
        if let event {
            let attributes = String(decoding: JSONValue.object(event.attributes).canonicalBytes, as: UTF8.self)
            text +=
                "\t\(event.type)\toccurredAt=\(event.occurredAt.rfc3339)\tuser=\(event.userId)\tdevice=\(event.deviceId)\t\(attributes)"
        } else if let openError {
            text += "\t<\(openError)>"
        } else if let erasedAt {
            text += "\t<erased under the record at seq \(erasedAt)>"
        } else if header.kind == .event {
            text += "\t<encrypted, \(entry.payload.count) bytes, key \(header.dataKeyId); use --decrypt>"
        } else {
            text += "\t" + String(decoding: entry.payload, as: UTF8.self)
        }
        return text
    }
}

/// The RFC 3339 text of the last time rendered, kept for the next entry: the entries of one batch share their
/// sealing time.
struct RecentTime {
    private var last: (milliseconds: Int64, text: [UInt8])?

    /// `time.rfc3339` as UTF-8.
    mutating func rfc3339(_ time: AuditTimestamp) -> [UInt8] {
        if let last, last.milliseconds == time.millisecondsSinceEpoch { return last.text }
        let text = Array(time.rfc3339.utf8)
        last = (time.millisecondsSinceEpoch, text)
        return text
    }
}
