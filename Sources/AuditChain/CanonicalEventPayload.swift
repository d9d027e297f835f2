/// An opened event payload recognised, without building the event, as exactly the canonical payload of a valid
/// ``AuditEvent`` (docs/FORMAT.md, sections 8 and 8.2): what ``AuditEvent/decoding(payload:)`` accepts and says is
/// canonical, with the same type, user, device and time of occurrence.
///
/// A fast path for readers that print payloads as they were sealed (`auditctl log`): one pass over the bytes, no
/// dictionary and no string built. It recognises only the common case and gives up (nil) on anything else: a payload
/// that is not canonical or not an event, and also one whose type, user, device or time has an escape. The full
/// decode then says what is wrong, or decodes what this left aside. Its tests hold it to the full decode on fuzzed
/// inputs.
public struct CanonicalEventPayload: Sendable {
    /// The payload, which is the event's ``AuditEvent/canonicalPayload``.
    public let bytes: [UInt8]
    /// The event's `occurredAt`.
    public let occurredAt: AuditTimestamp
    private let typeBytes: Range<Int>
    private let userIdBytes: Range<Int>
    private let deviceIdBytes: Range<Int>

    /// The event's type.
    public var type: String { String(decoding: bytes[typeBytes], as: UTF8.self) }
    /// The event's user.
    public var userId: String { String(decoding: bytes[userIdBytes], as: UTF8.self) }
    /// The event's device.
    public var deviceId: String { String(decoding: bytes[deviceIdBytes], as: UTF8.self) }

    /// Recognises `bytes`, or nil (see the type's description).
    public init?(scanning bytes: [UInt8]) {
        let found = bytes.withUnsafeBufferPointer {
            buffer -> (type: Range<Int>, user: Range<Int>, device: Range<Int>, time: Range<Int>, ascii: Bool)? in
            var scan = CanonicalScanner(buffer)
            // The members in their canonical order (their names sorted by UTF-8 bytes), each exactly once.
            guard scan.literal(#"{"attributes":"#), scan.next == UInt8(ascii: "{"), scan.value(depth: 1),
                scan.literal(#","deviceId":"#), let device = scan.string(escapes: false),
                scan.literal(#","idempotencyKey":"#), scan.string(escapes: true) != nil,
                scan.literal(#","occurredAt":"#), let time = scan.string(escapes: false),
                scan.literal(#","type":"#), let type = scan.string(escapes: false),
                scan.literal(#","userId":"#), let user = scan.string(escapes: false),
                scan.literal(#","v":1}"#), scan.index == buffer.count
            else { return nil }
            return (type, user, device, time, !scan.sawNonASCII)
        }
        // The full decode refuses a payload that is not UTF-8; outside strings a byte above 0x7f fails the scan.
        guard let found, found.ascii || String(validating: bytes, as: UTF8.self) != nil else { return nil }
        let text = String(decoding: bytes[found.time], as: UTF8.self)
        guard AuditTimestamp.isCanonicalText(text), let occurredAt = AuditTimestamp(rfc3339: text) else { return nil }
        self.bytes = bytes
        self.occurredAt = occurredAt
        typeBytes = found.type
        userIdBytes = found.user
        deviceIdBytes = found.device
    }
}

/// Canonical JSON (docs/FORMAT.md, section 8) read in one pass: each method consumes one token or value in its
/// canonical form and says whether it was there; on false the position is unspecified and the scan is over.
private struct CanonicalScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Whether a string held a byte above 0x7f (the payload then needs a UTF-8 check).
    var sawNonASCII = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The byte at the position, if any.
    var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func literal(_ text: StaticString) -> Bool {
        text.withUTF8Buffer { literal in
            guard bytes.count - index >= literal.count else { return false }
            for offset in 0..<literal.count where bytes[index + offset] != literal[offset] { return false }
            index += literal.count
            return true
        }
    }

    /// A string as the encoder writes it; the range of its bytes between the quotes. With `escapes` false, a
    /// string with an escape is not accepted (its bytes would not be its characters).
    mutating func string(escapes: Bool) -> Range<Int>? {
        guard next == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let range = start..<index
                index += 1
                return range
            case 0x00..<0x20:
                return nil
            case UInt8(ascii: "\\"):
                guard escapes, index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                    UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    // Only `\u00XX` with lowercase digits, for a control character that has no short escape.
                    guard bytes.count - index >= 6, bytes[index + 2] == UInt8(ascii: "0"),
                        bytes[index + 3] == UInt8(ascii: "0"), let high = Self.hexValue(bytes[index + 4]),
                        let low = Self.hexValue(bytes[index + 5]), high < 2
                    else { return nil }
                    guard ![0x08, 0x09, 0x0a, 0x0c, 0x0d].contains(high << 4 | low) else { return nil }
                    index += 6
                default:
                    return nil
                }
            default:
                if byte > 0x7f { sawNonASCII = true }
                index += 1
            }
        }
        return nil
    }

    /// The value of a lowercase hexadecimal digit.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// An integer as the encoder writes it: no leading zero, not `-0`, within ±(2^53 − 1).
    mutating func integer() -> Bool {
        let negative = next == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var value: Int64 = 0
        while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            // More than 16 digits is out of range whatever they are (2^53 − 1 has 16), so this cannot overflow.
            guard index - start < 16 else { return false }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            index += 1
        }
        guard index > start, value <= JSONValue.maxSafeInteger else { return false }
        // "0" alone; not "00", "01" or "-0".
        if bytes[start] == UInt8(ascii: "0") { return index - start == 1 && !negative }
        return true
    }

    /// Any value at nesting `depth`, as the parser counts it (the payload's members are at depth 1).
    mutating func value(depth: Int) -> Bool {
        guard depth <= JSONValue.maxDepth, let byte = next else { return false }
        switch byte {
        case UInt8(ascii: "\""): return string(escapes: true) != nil
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
        default: return false
        }
    }

    mutating func array(depth: Int) -> Bool {
        index += 1
        if next == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            guard value(depth: depth + 1) else { return false }
            switch next {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return true
            default: return false
            }
        }
    }

    /// An object whose keys are strictly increasing by their bytes (so no key twice). Keys with an escape are not
    /// accepted: the order is that of the characters, which their escaped bytes need not follow.
    mutating func object(depth: Int) -> Bool {
        index += 1
        if next == UInt8(ascii: "}") {
            index += 1
            return true
        }
        var previous: Range<Int>?
        while true {
            guard let key = string(escapes: false) else { return false }
            if let previous, !bytes[previous].lexicographicallyPrecedes(bytes[key]) { return false }
            previous = key
            guard next == UInt8(ascii: ":") else { return false }
            index += 1
            guard value(depth: depth + 1) else { return false }
            switch next {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return true
            default: return false
            }
        }
    }
}
