/// The hostile-integer corpus: every JSON value of a seed document replaced, one position at a time, by
/// numbers that no parser of the format may accept (and that used to trap one: `-9223372036854775808`).
public enum HostileIntegers: Sendable {
    /// Numbers outside ±(2^53 − 1), or not integers.
    public static let numbers: [String] = [
        "-9223372036854775808", "9223372036854775807", "18446744073709551615", "-9223372036854775809",
        "9007199254740992", "-9007199254740992", "1e400", "-1e400", "1.5", String(repeating: "9", count: 400),
    ]

    /// The document with each scalar value (number, string value, literal; not object keys) replaced by each
    /// hostile number in turn.
    public static func variants(of document: [UInt8]) -> [[UInt8]] {
        let spans = valueSpans(document)
        return spans.flatMap { span in
            numbers.map { number in
                var copy = document
                copy.replaceSubrange(span, with: Array(number.utf8))
                return copy
            }
        }
    }

    /// The byte ranges of the scalar values of a JSON text (a lenient scan: good enough for seed documents).
    public static func valueSpans(_ bytes: [UInt8]) -> [Range<Int>] {
        var spans: [Range<Int>] = []
        var index = 0
        func isScalarByte(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "E")].contains(byte)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index = min(index + 1, bytes.count)
                var after = index
                while after < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[after]) { after += 1 }
                if after >= bytes.count || bytes[after] != UInt8(ascii: ":") { spans.append(start..<index) }
            } else if isScalarByte(byte) {
                let start = index
                while index < bytes.count, isScalarByte(bytes[index]) { index += 1 }
                spans.append(start..<index)
            } else {
                index += 1
            }
        }
        return spans
    }
}
