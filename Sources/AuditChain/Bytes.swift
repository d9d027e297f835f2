import Crypto

/// Helpers for the fixed-width, big-endian binary encodings of the format.
enum Bytes {
    /// SHA-256 over the concatenation of `parts`, each hashed where it lies, the digest copied out once (the
    /// generic `update(data:)` and `Array(digest)` paths cost more than the hash itself for small inputs).
    static func sha256(_ parts: [UInt8]...) -> [UInt8] {
        var hasher = SHA256()
        for part in parts { part.withUnsafeBytes { hasher.update(bufferPointer: $0) } }
        return digestBytes(hasher.finalize())
    }

    /// The bytes of a digest.
    static func digestBytes(_ digest: SHA256.Digest) -> [UInt8] {
        digest.withUnsafeBytes { Array($0) }
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lowercase hexadecimal encoding.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes lowercase or uppercase hexadecimal; returns nil on odd length or a non-hex character.
    static func unhex(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { buffer.append(contentsOf: $0) }
    }

    /// Constant-time comparison of two byte strings of equal length (false if the lengths differ).
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var diff: UInt8 = 0
        for index in lhs.indices { diff |= lhs[index] ^ rhs[index] }
        return diff == 0
    }
}

/// A cursor that reads the big-endian fields of a binary layout, failing on a short buffer.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func read(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        var value: T = 0
        for index in 0..<size { value = value << 8 | T(bytes[offset + index]) }
        offset += size
        return value
    }
}
