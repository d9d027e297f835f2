/// A deterministic pseudo-random generator (SplitMix64): the same seed gives the same mutations on every machine.
public struct FuzzRandom: Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number in `0..<bound` (0 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int {
        bound > 0 ? Int(next() % UInt64(bound)) : 0
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
}

/// Mutations of a seed input that hostile peers, damaged files and forged entries produce: bit flips, byte
/// inserts and deletes, splices, truncation, extreme integers in place of numbers (text and binary), deep
/// nesting and JSON tokens in odd places.
public enum FuzzMutator: Sendable {
    /// Numbers that overflow, saturate or fall outside the format's ±(2^53 − 1) (the hostile integers).
    public static let extremeNumbers: [String] = [
        "-9223372036854775808", "9223372036854775807", "18446744073709551615", "18446744073709551616",
        "-9223372036854775809", "9007199254740992", "-9007199254740992", "9007199254740991", "-9007199254740991",
        "4294967295", "4294967296", "-1", "-0", "0", "00", "1e400", "-1e400", "1E-400", "1.5", "0.0",
        String(repeating: "9", count: 400), "-" + String(repeating: "9", count: 400),
    ]

    /// Big-endian 8-byte patterns written over binary fields (seq, time, lengths).
    static let extremeWords: [UInt64] = [.max, 0, 1 << 63, (1 << 63) - 1, (1 << 53), 0xFFFF_FFFF, 0x0010_0001]

    /// Tokens that confuse a JSON parser when they appear in the wrong place.
    static let tokens: [[UInt8]] =
        [
            "{", "}", "[", "]", "\"", ":", ",", "null", "true", "\\u0000", "\\ud800", "\\udc00", "\\uD83D\\uDE00", "\\",
            "\n", "\r\n", " ", "{\"v\":1}", "\"v\":2", "\"seq\":", "[]", "{}", "\"\":\"\"",
        ].map { Array($0.utf8) } + [
            [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x00], [0x7F],
        ]

    /// Offsets of the 8-byte numeric fields of an entry header (seq, time) and of its payload length, which the
    /// binary mutation prefers half of the time.
    static let headerOffsets = [24, 32, 100, 104]

    /// The largest input a mutation produces (keeps each execution cheap).
    public static let maxSize = 1 << 20

    /// Applies one to four random mutations to `input`; `corpus` supplies splice partners.
    public static func mutate(_ input: [UInt8], corpus: [[UInt8]], random: inout FuzzRandom) -> [UInt8] {
        var bytes = input
        for _ in 0...random.below(4) {
            mutateOnce(&bytes, corpus: corpus, random: &random)
        }
        if bytes.count > maxSize { bytes.removeLast(bytes.count - maxSize) }
        return bytes
    }

    private static func mutateOnce(_ bytes: inout [UInt8], corpus: [[UInt8]], random: inout FuzzRandom) {
        let position = random.below(bytes.count + 1)
        switch random.below(11) {
        case 0:
            guard !bytes.isEmpty else { return }
            let index = random.below(bytes.count)
            bytes[index] ^= 1 << UInt8(random.below(8))
        case 1:
            bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        case 2:
            let count = min(bytes.count - position, 1 + random.below(16))
            bytes.removeSubrange(position..<(position + count))
        case 3:
            replaceNumber(&bytes, random: &random)
        case 4:
            bytes.insert(contentsOf: random.pick(tokens), at: position)
        case 5:
            guard let other = corpus.isEmpty ? nil : random.pick(corpus) else { return }
            let cut = random.below(other.count + 1)
            bytes = Array(bytes[..<position]) + other[cut...]
        case 6:
            bytes.removeLast(bytes.count - position)
        case 7:
            let depth = random.pick([33, 64, 1000, 20000])
            let open: UInt8 = random.below(2) == 0 ? UInt8(ascii: "[") : UInt8(ascii: "{")
            bytes.insert(contentsOf: [UInt8](repeating: open, count: depth), at: position)
        case 8:
            let count = min(bytes.count - position, 1 + random.below(64))
            bytes.insert(contentsOf: bytes[position..<(position + count)], at: position)
        case 9:
            overwriteWord(&bytes, random: &random)
        default:
            let length = random.pick([0, 1, 257, 70000])
            bytes.insert(contentsOf: [UInt8](repeating: UInt8(ascii: "a"), count: length), at: position)
        }
    }

    /// Replaces a run of digits (with its sign) by an extreme number, or inserts one where there is none.
    private static func replaceNumber(_ bytes: inout [UInt8], random: inout FuzzRandom) {
        let replacement = Array(random.pick(extremeNumbers).utf8)
        let digits = bytes.indices.filter { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) }
        guard !digits.isEmpty else {
            bytes.insert(contentsOf: replacement, at: random.below(bytes.count + 1))
            return
        }
        var start = random.pick(digits)
        var end = start
        while start > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[start - 1]) { start -= 1 }
        if start > 0, bytes[start - 1] == UInt8(ascii: "-") { start -= 1 }
        while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
        bytes.replaceSubrange(start..<end, with: replacement)
    }

    /// Writes an extreme big-endian 8-byte word over the input (an entry header's seq or time, most often).
    private static func overwriteWord(_ bytes: inout [UInt8], random: inout FuzzRandom) {
        guard bytes.count >= 8 else { return }
        let preferred = headerOffsets.filter { $0 + 8 <= bytes.count }
        let offset =
            random.below(2) == 0 && !preferred.isEmpty ? random.pick(preferred) : random.below(bytes.count - 7)
        let word = random.pick(extremeWords)
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index))) }
    }
}
