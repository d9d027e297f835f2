/// A JSON value as the audit format admits it: integers only (no fractions), objects without duplicate keys.
///
/// The canonical encoding (``canonicalBytes``) is the byte form sealed into entries; see docs/FORMAT.md,
/// "Canonical JSON".
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// An integer in the interoperable range -(2^53-1) ... 2^53-1.
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Largest magnitude of an integer the format accepts (I-JSON, RFC 7493).
    public static let maxSafeInteger: Int64 = (1 << 53) - 1

    /// An unsigned count or sequence number as JSON: an integer within ±(2^53 − 1), else its decimal digits as a
    /// string. Larger integers are not interoperable (RFC 7493) and the parser refuses them, so a value read from
    /// a damaged or forged header (seq 2^64 − 1) is still printed, never trapped on.
    public static func unsigned(_ value: UInt64) -> JSONValue {
        value <= UInt64(maxSafeInteger) ? .integer(Int64(value)) : .string(String(value))
    }

    /// The canonical bytes: object keys sorted by their UTF-8 bytes, no whitespace, minimal escaping.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        appendCanonical(to: &out)
        return out
    }

    /// A short name of the value's type, used in error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    func appendCanonical(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): out.append(contentsOf: String(value).utf8)
        case .string(let value): Self.appendString(value, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.appendCanonical(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            Self.appendObject(members, to: &out)
        }
    }

    /// Appends an object with its keys sorted by their UTF-8 bytes.
    static func appendObject(_ members: [String: JSONValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        switch members.count {
        case 0: break
        case 1:
            let member = members.first!
            appendString(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            member.value.appendCanonical(to: &out)
        default:
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.appendCanonical(to: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            // Fast path: nothing to escape (the usual case), so the bytes are copied as they are, in one go.
            if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                out.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0c: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case 0x0a: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0d: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0x00..<0x20:
                    out.append(contentsOf: Array("\\u00".utf8))
                    out.append(Bytes.hexDigits[Int(byte >> 4)])
                    out.append(Bytes.hexDigits[Int(byte & 0x0f)])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
