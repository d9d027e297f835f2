/// A strict JSON parser: valid UTF-8 only, no duplicate keys, no lone surrogates, integers only, bounded depth.
extension JSONValue {
    /// Why a byte string is not acceptable JSON.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Byte offset at which the problem was found.
        public var offset: Int
        /// What is wrong.
        public var reason: String
        /// True when the input is not valid UTF-8 (the catalogue reports this as its own code).
        public var isInvalidUTF8: Bool

        /// A readable message.
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// Deepest nesting the parser accepts.
    public static let maxDepth = 32

    /// Parses one JSON text (surrounding whitespace allowed).
    /// - Parameter bytes: UTF-8 encoded JSON.
    /// - Throws: ``ParseError``.
    public init(parsing bytes: some Collection<UInt8>) throws(ParseError) {
        self = try Self.parsingCanonically(bytes).value
    }

    /// Parses one JSON text like ``init(parsing:)`` and says whether it is in the canonical form (docs/FORMAT.md,
    /// section 8): when `isCanonical` is true, `value.canonicalBytes` equals `bytes` byte for byte.
    ///
    /// Found while parsing, at no extra pass: the text is canonical unless the parser skips whitespace, meets object
    /// keys not in strictly increasing order of their UTF-8 bytes, an escape other than the one the encoder writes
    /// (`\/`, `\u0041`, `\u000A` for `\n`, uppercase hex digits, ...) or `-0`.
    /// - Throws: ``ParseError``.
    public static func parsingCanonically(
        _ bytes: some Collection<UInt8>
    ) throws(ParseError) -> (value: JSONValue, isCanonical: Bool) {
        let array = Array(bytes)
        guard String(validating: array, as: UTF8.self) != nil else {
            throw ParseError(offset: 0, reason: "input is not valid UTF-8", isInvalidUTF8: true)
        }
        var parser = Parser(bytes: array)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == array.count else { throw parser.error("trailing characters after the JSON value") }
        return (value, parser.isCanonical)
    }
}

private struct Parser {
    let bytes: [UInt8]
    var index = 0
    /// False once the text departs from the canonical form (see `JSONValue.parsingCanonically`).
    var isCanonical = true

    func error(_ reason: String) -> JSONValue.ParseError {
        JSONValue.ParseError(offset: index, reason: reason, isInvalidUTF8: false)
    }

    mutating func skipWhitespace() {
        let start = index
        while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
        if index != start { isCanonical = false }
    }

    mutating func expect(_ literal: String) throws(JSONValue.ParseError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("expected '\(literal)'") }
            index += 1
        }
    }

    mutating func parseValue(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw error("nesting deeper than \(JSONValue.maxDepth)") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        index += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(values)
        }
        while true {
            skipWhitespace()
            values.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            } else {
                throw error("expected ',' or ']' in array")
            }
        }
    }

    mutating func parseObject(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        var previousKey: String?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let keyOffset = index
            let key = try parseString()
            guard members[key] == nil else {
                throw JSONValue.ParseError(offset: keyOffset, reason: "duplicate key \"\(key)\"", isInvalidUTF8: false)
            }
            // The encoder sorts members by their keys' UTF-8 bytes.
            if isCanonical, let previousKey, !previousKey.utf8.lexicographicallyPrecedes(key.utf8) {
                isCanonical = false
            }
            previousKey = key
            skipWhitespace()
            try expect(":")
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}' in object")
            }
        }
    }

    mutating func parseNumber() throws(JSONValue.ParseError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index > digitsStart else { throw error("expected digits") }
        if bytes[digitsStart] == UInt8(ascii: "0"), index - digitsStart > 1 { throw error("leading zero in number") }
        // `-0` is the integer 0, which the encoder writes `0`.
        if digitsStart > start, bytes[digitsStart] == UInt8(ascii: "0") { isCanonical = false }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            throw error("fractional and exponent numbers are not accepted; use an integer")
        }
        // More than 16 digits (2^53 - 1 has 16) is out of range whatever they are. `magnitude`, not `abs`:
        // abs(Int64.min) traps, and -9223372036854775808 is a valid Int64.
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard index - digitsStart <= 16, let value = Int64(text),
            value.magnitude <= JSONValue.maxSafeInteger.magnitude
        else {
            throw JSONValue.ParseError(
                offset: start,
                reason: "integer outside ±(2^53-1)",
                isInvalidUTF8: false
            )
        }
        return .integer(value)
    }

    mutating func parseHex4() throws(JSONValue.ParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw error("truncated \\u escape") }
            let char = bytes[index]
            let digit: UInt32
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(char - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(char - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(char - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseString() throws(JSONValue.ParseError) -> String {
        index += 1
        // Fast path: a run of bytes with nothing to unescape (base64 payloads, names) becomes the string at once.
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
        }
        var out = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if byte < 0x20 { throw error("unescaped control character in string") }
            if byte != UInt8(ascii: "\\") {
                out.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { throw error("unterminated escape") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"):
                isCanonical = false
                out.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                let digits = index
                var scalar = try parseHex4()
                if isCanonical, !Self.isCanonicalEscape(scalar, hex: bytes[digits..<index]) { isCanonical = false }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("lone surrogate in \\u escape") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate in \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw error("lone surrogate in \\u escape")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: throw error("unknown escape")
            }
        }
    }

    /// Whether `\uXXXX` (hex digits `hex`) is how the encoder writes `scalar`: only for the control characters
    /// below U+0020 that have no short escape, with lowercase digits.
    static func isCanonicalEscape(_ scalar: UInt32, hex: ArraySlice<UInt8>) -> Bool {
        guard scalar < 0x20, ![0x08, 0x09, 0x0a, 0x0c, 0x0d].contains(scalar) else { return false }
        return hex.elementsEqual([
            UInt8(ascii: "0"), UInt8(ascii: "0"), Bytes.hexDigits[Int(scalar >> 4)],
            Bytes.hexDigits[Int(scalar & 0x0f)],
        ])
    }
}
