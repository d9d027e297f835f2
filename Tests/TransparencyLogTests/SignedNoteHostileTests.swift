import Testing
import TransparencyLog

/// Hostile notes: every malformed form c2sp.org/signed-note "Format" names, truncations, limits, bit flips. Each is
/// refused with the rule it breaks, and nothing traps.
@Suite("Signed notes: hostile input")
struct SignedNoteHostileTests {
    static let good = Array(SpecExamples.fooNote.utf8)
    static let signature =
        "Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM="

    static func parse(_ text: String) throws(SignedNote.Failure) -> SignedNote {
        try SignedNote(parsing: Array(text.utf8))
    }

    @Test("each malformed form is refused with its failure")
    func malformed() {
        let sig = Self.signature
        let cases: [(String, SignedNote.Failure)] = [
            ("", .notNewlineTerminated),
            ("\n", .missingBlankLine),
            ("text\n", .missingBlankLine),
            ("text\n\n", .noSignatures),
            ("text\n\n\u{2014} example.com/foo \(sig)", .notNewlineTerminated),
            ("text\n\u{2014} example.com/foo \(sig)\n", .missingBlankLine),
            ("text\n\n\u{2014} example.com/foo \(sig)\n\n", .noSignatures),
            ("text\n\n- example.com/foo \(sig)\n", .malformedSignatureLine(line: 1)),
            ("text\n\n\u{2013} example.com/foo \(sig)\n", .malformedSignatureLine(line: 1)),
            ("text\n\n\u{2014}example.com/foo \(sig)\n", .malformedSignatureLine(line: 1)),
            ("text\n\n\u{2014} example.com/foo\(sig)\n", .malformedSignatureLine(line: 1)),
            ("text\n\n\u{2014} example.com/foo \(sig)\nnot a signature\n", .malformedSignatureLine(line: 2)),
            ("text\n\n\u{2014}  example.com/foo \(sig)\n", .invalidKeyName(line: 1)),
            ("text\n\n\u{2014} a+b \(sig)\n", .invalidKeyName(line: 1)),
            ("text\n\n\u{2014} a\u{A0}b \(sig)\n", .invalidKeyName(line: 1)),
            ("text\n\n\u{2014} example.com/foo  \(sig)\n", .malformedSignature(line: 1)),
            ("text\n\n\u{2014} example.com/foo \(sig) \n", .malformedSignature(line: 1)),
            ("text\n\n\u{2014} example.com/foo \(sig.dropLast())\n", .malformedSignature(line: 1)),
            ("text\n\n\u{2014} example.com/foo \(sig)=\n", .malformedSignature(line: 1)),
            ("text\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1T-agv1YEq\n", .malformedSignature(line: 1)),
            ("text\n\n\u{2014} example.com/foo AAAAAB==\n", .malformedSignature(line: 1)),
            ("text\n\n\u{2014} example.com/foo \n", .signatureTooShort(line: 1)),
            ("text\n\n\u{2014} example.com/foo AAAAAA==\n", .signatureTooShort(line: 1)),
            ("text\n\n\u{2014} example.com/foo AAAA\n", .signatureTooShort(line: 1)),
            ("text\r\n\n\u{2014} example.com/foo \(sig)\n", .controlCharacter),
            ("te\u{0}xt\n\n\u{2014} example.com/foo \(sig)\n", .controlCharacter),
            ("text\n\n\u{2014} example.com/foo \(sig)\r\n", .controlCharacter),
            ("te\txt\n\n\u{2014} example.com/foo \(sig)\n", .controlCharacter),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text.debugDescription)") { try Self.parse(text) }
        }
        // Five bytes after the ID is the shortest accepted form (the verifier then finds it is not Ed25519's 64).
        #expect(throws: Never.self) { try Self.parse("text\n\n\u{2014} example.com/foo AAAAAAA=\n") }
    }

    @Test(
        "bytes that are not UTF-8 are refused",
        arguments: [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x80]]
    )
    func notUTF8(bad: [UInt8]) {
        var bytes = Self.good
        bytes.insert(contentsOf: bad, at: 3)
        #expect(throws: SignedNote.Failure.notUTF8) { try SignedNote(parsing: bytes) }
    }

    @Test("every truncation of a good note is refused, and never traps")
    func truncations() {
        for count in 0..<Self.good.count {
            #expect(throws: SignedNote.Failure.self) { try SignedNote(parsing: Array(Self.good.prefix(count))) }
        }
    }

    @Test("every single-bit flip of a good note is refused by parsing or by verification")
    func bitFlips() throws {
        let key = try NoteVerifierKey(parsing: SpecExamples.fooVKey)
        for index in Self.good.indices {
            for bit in 0..<8 {
                var bytes = Self.good
                bytes[index] ^= 1 << bit
                #expect(throws: SignedNote.Failure.self, "byte \(index) bit \(bit)") {
                    _ = try SignedNote(parsing: bytes).verify(keys: [key])
                }
            }
        }
    }

    @Test("1000 signature lines are refused before any is read; the limit and 16 are accepted")
    func signatureCount() throws {
        let line = "\u{2014} witness.example/w \(Self.signature)\n"
        let many = "text\n\n" + String(repeating: line, count: 1000)
        #expect(throws: SignedNote.Failure.tooManySignatures(count: 1000, limit: 100)) { try Self.parse(many) }
        #expect(try Self.parse("text\n\n" + String(repeating: line, count: 100)).signatures.count == 100)
        #expect(try Self.parse("text\n\n" + String(repeating: line, count: 16)).signatures.count == 16)
        var limits = SignedNote.Limits()
        limits.maxSignatures = 1000
        #expect(try SignedNote(parsing: Array(many.utf8), limits: limits).signatures.count == 1000)
    }

    @Test("a note over the size limit is refused before it is read")
    func size() throws {
        let huge = [UInt8](repeating: 0x61, count: (1 << 20) + 1)
        #expect(throws: SignedNote.Failure.tooLarge(size: (1 << 20) + 1, limit: 1 << 20)) {
            try SignedNote(parsing: huge)
        }
        var limits = SignedNote.Limits()
        limits.maxBytes = Self.good.count - 1
        #expect(throws: SignedNote.Failure.tooLarge(size: Self.good.count, limit: Self.good.count - 1)) {
            try SignedNote(parsing: Self.good, limits: limits)
        }
        // A megabyte of text with no blank line, and one of blank lines: refused, in linear time.
        let lines = [UInt8](repeating: 0x0A, count: 1 << 20)
        #expect(throws: SignedNote.Failure.noSignatures) { try SignedNote(parsing: lines) }
    }

    @Test("every description names the problem")
    func descriptions() {
        let failures: [SignedNote.Failure] = [
            .tooLarge(size: 2, limit: 1), .notUTF8, .controlCharacter, .notNewlineTerminated,
            .textNotNewlineTerminated, .missingBlankLine, .noSignatures, .tooManySignatures(count: 2, limit: 1),
            .malformedSignatureLine(line: 1), .invalidKeyName(line: 1), .invalidKeyName(line: nil),
            .malformedSignature(line: 1), .signatureTooShort(line: 2), .badSignature(keyName: "a", keyID: 1),
            .noKnownSignature, .ambiguousKeys(keyName: "a", keyID: 1), .signingFailed,
        ]
        for failure in failures { #expect(!failure.description.isEmpty) }
        #expect(SignedNote.Failure.badSignature(keyName: "a", keyID: 0xab).description.contains("000000ab"))
    }
}
