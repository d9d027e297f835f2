import Foundation
import Testing

@testable import TransparencyLog

/// The strict encodings under every format: base64 against Foundation's, canonical forms only, decimals at the
/// edges of `UInt64`, fixed-length lowercase hex.
@Suite("Note encodings")
struct NoteEncodingTests {
    @Test("base64 matches Foundation's for every length up to 100, and decodes back")
    func base64RoundTrip() {
        for count in 0...100 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ count) }
            let text = NoteEncoding.base64(bytes)
            #expect(text == Data(bytes).base64EncodedString())
            #expect(NoteEncoding.base64Decode(Array(text.utf8)) == bytes)
        }
    }

    @Test(
        "non-canonical or foreign base64 is refused",
        arguments: [
            "A", "AA", "AAA", "AAAAA", "AB==", "AAB=", "A===", "====", "AA=A", "AA==AAAA", "-_AA", "AA\nA",
            " AAA", "AAAA=", "AA%%",
        ]
    )
    func base64Refused(text: String) {
        #expect(NoteEncoding.base64Decode(Array(text.utf8)) == nil)
    }

    @Test("decimals: no leading zero, no sign, no space, fits 64 bits")
    func decimals() {
        let accepted: [(String, UInt64)] = [("0", 0), ("7", 7), ("10", 10), ("18446744073709551615", .max)]
        for (text, value) in accepted { #expect(NoteEncoding.decimal(Array(text.utf8)) == value) }
        for text in [
            "", "00", "01", "+1", "-1", " 1", "1 ", "1e3", "18446744073709551616", "99999999999999999999",
            "000000000000000000001", String(repeating: "9", count: 1000),
        ] {
            #expect(NoteEncoding.decimal(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test("key ID hex: exactly 8 lowercase digits")
    func hex() {
        #expect(NoteEncoding.hex32(0x0000_00ab) == "000000ab")
        #expect(NoteEncoding.hex32(parsing: Array("530d903a".utf8)) == 0x530d_903a)
        for text in ["530D903A", "530d903", "530d903a0", "0x530d90", "530d903g", ""] {
            #expect(NoteEncoding.hex32(parsing: Array(text.utf8)) == nil, "\(text)")
        }
    }
}
