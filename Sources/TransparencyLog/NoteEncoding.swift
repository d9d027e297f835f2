/// The text encodings the C2SP formats share, written strictly so that every accepted form has exactly one
/// spelling: the parsed value rendered again gives back the bytes that were read.
///
/// - Base64 is RFC 4648 section 4 (standard alphabet, padded), as every C2SP spec's "Conventions" section says; only
///   the canonical form is accepted (RFC 4648 section 3.5: padding present, the unused bits zero).
/// - Decimals are ASCII digits with no leading zero unless the value is 0 (c2sp.org/tlog-checkpoint "Note text"
///   item 2, c2sp.org/tlog-proof "Format"), at most `UInt64.max`.
/// - Hex is fixed-length lowercase (c2sp.org/signed-note "Conventions used in this document").
enum NoteEncoding {
    static let base64Alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each base64 character, 0xFF for bytes outside the alphabet.
    static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in base64Alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// The padded standard base64 of `bytes`.
    static func base64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            out.append(base64Alphabet[Int(group >> 18 & 0x3F)])
            out.append(base64Alphabet[Int(group >> 12 & 0x3F)])
            out.append(remaining > 1 ? base64Alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            out.append(remaining > 2 ? base64Alphabet[Int(group & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of canonical padded standard base64, nil for anything else (a wrong length, a character outside the
    /// alphabet, misplaced or missing padding, non-zero unused bits). The empty text is the empty byte string.
    static func base64Decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let chars = Array(text)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            // Only the last group may end in "=" or "==".
            var padding = 0
            if index + 4 == chars.count, chars[index + 3] == UInt8(ascii: "=") {
                padding = chars[index + 2] == UInt8(ascii: "=") ? 2 : 1
            }
            var group: UInt32 = 0
            for offset in 0..<4 {
                let value: UInt8
                if offset >= 4 - padding {
                    value = 0
                } else {
                    value = base64Values[Int(chars[index + offset])]
                    guard value != 0xFF else { return nil }
                }
                group = group << 6 | UInt32(value)
            }
            out.append(UInt8(group >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(group >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(group & 0xFF)) }
            // Canonical only: the bits the padding leaves unused must be zero.
            if padding == 2, group & 0xFFFF != 0 { return nil }
            if padding == 1, group & 0xFF != 0 { return nil }
            index += 4
        }
        return out
    }

    /// The value of an ASCII decimal with no leading zero (unless it is `0`) that fits a `UInt64`; nil otherwise.
    static func decimal(_ text: some Collection<UInt8>) -> UInt64? {
        guard let first = text.first, text.count <= 20 else { return nil }
        guard first != UInt8(ascii: "0") || text.count == 1 else { return nil }
        var value: UInt64 = 0
        for character in text {
            guard character >= UInt8(ascii: "0"), character <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(character - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// Eight lowercase hex digits of `value`.
    static func hex32(_ value: UInt32) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let bytes = (0..<8).map { digits[Int(value >> UInt32(28 - 4 * $0) & 0xF)] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of exactly eight lowercase hex digits; nil otherwise.
    static func hex32(parsing text: some Collection<UInt8>) -> UInt32? {
        guard text.count == 8 else { return nil }
        var value: UInt32 = 0
        for character in text {
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The big-endian `UInt32` of the first four bytes (the caller has checked there are four).
    static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The four big-endian bytes of `value`.
    static func bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Whether `bytes` holds no ASCII control character (below U+0020) other than newline (c2sp.org/signed-note
    /// "Format"). Checking bytes is enough: in UTF-8, no byte of a multi-byte character is below 0x80.
    static func hasNoControlCharacters(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 || $0 == 0x0A }
    }
}
