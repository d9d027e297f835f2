import Testing
import TransparencyLog

/// Hostile proof files: every malformed form c2sp.org/tlog-proof@v1 "Format" names, truncations, bit flips and sizes.
/// Each is refused with the rule it breaks, and nothing traps.
@Suite("Proof files: hostile input")
struct TlogProofHostileTests {
    static let hash = "YkJ/G/iC5dczTjGVIQABnJQcMYeYhGP4cDg/RvjFBh4="

    /// A file of `head` followed by a good signed checkpoint.
    static func file(_ head: String) throws -> [UInt8] {
        let (proof, _, _) = try TlogProofTests.fixture()
        return Array(head.utf8) + proof.note.bytes
    }

    @Test("each malformed form is refused with its failure")
    func malformed() throws {
        let h = Self.hash
        let cases: [(String, TlogProof.Failure)] = [
            ("", .missingHeader),
            ("c2sp.org/tlog-proof@v2\nindex 0\n\n", .missingHeader),
            ("c2sp.org/tlog-proof@v1 \nindex 0\n\n", .missingHeader),
            ("\nc2sp.org/tlog-proof@v1\nindex 0\n\n", .missingHeader),
            ("c2sp.org/tlog-proof@v1\n\n", .missingIndex),
            ("c2sp.org/tlog-proof@v1\nindex0\n\n", .missingIndex),
            ("c2sp.org/tlog-proof@v1\nIndex 0\n\n", .missingIndex),
            ("c2sp.org/tlog-proof@v1\n\(h)\nindex 0\n\n", .missingIndex),
            ("c2sp.org/tlog-proof@v1\nindex 0\nextra AAAA\n\n", .malformedHash(line: 3)),
            ("c2sp.org/tlog-proof@v1\nextra AAAA\nextra AAAA\nindex 0\n\n", .missingIndex),
            ("c2sp.org/tlog-proof@v1\nextra \nindex 0\n\n", .malformedExtra),
            ("c2sp.org/tlog-proof@v1\nextra AAA\nindex 0\n\n", .malformedExtra),
            ("c2sp.org/tlog-proof@v1\nextra AB==\nindex 0\n\n", .malformedExtra),
            ("c2sp.org/tlog-proof@v1\nextra  AAAA\nindex 0\n\n", .malformedExtra),
            ("c2sp.org/tlog-proof@v1\nindex \n\n", .malformedIndex),
            ("c2sp.org/tlog-proof@v1\nindex 01\n\n", .malformedIndex),
            ("c2sp.org/tlog-proof@v1\nindex -1\n\n", .malformedIndex),
            ("c2sp.org/tlog-proof@v1\nindex  1\n\n", .malformedIndex),
            ("c2sp.org/tlog-proof@v1\nindex 18446744073709551616\n\n", .malformedIndex),
            ("c2sp.org/tlog-proof@v1\nindex 1\n\(h.dropLast())\n\n", .malformedHash(line: 3)),
            ("c2sp.org/tlog-proof@v1\nindex 1\n\(h)\nAAAA\n\n", .malformedHash(line: 4)),
            ("c2sp.org/tlog-proof@v1\nextra AAAA\nindex 1\n\(h) \n\n", .malformedHash(line: 4)),
            ("c2sp.org/tlog-proof@v1\nindex 1\n" + String(repeating: "\(h)\n", count: 65) + "\n", .tooManyHashes),
        ]
        for (head, failure) in cases {
            #expect(throws: failure, "\(head.debugDescription)") { try TlogProof(parsing: Self.file(head)) }
        }
        #expect(throws: Never.self) {
            try TlogProof(parsing: Self.file("c2sp.org/tlog-proof@v1\nindex 18446744073709551615\n\n"))
        }
        #expect(throws: Never.self) {
            try TlogProof(
                parsing: Self.file("c2sp.org/tlog-proof@v1\nindex 0\n" + String(repeating: "\(h)\n", count: 64) + "\n")
            )
        }
    }

    @Test("a file that ends before its checkpoint, or whose checkpoint is not one, is refused")
    func checkpointPart() throws {
        let head = "c2sp.org/tlog-proof@v1\nindex 0\n"
        #expect(throws: TlogProof.Failure.missingCheckpoint) { try TlogProof(parsing: Array(head.utf8)) }
        #expect(throws: TlogProof.Failure.missingCheckpoint) { try TlogProof(parsing: Array((head + Self.hash).utf8)) }
        #expect(throws: TlogProof.Failure.note(.notNewlineTerminated)) {
            try TlogProof(parsing: Array((head + "\n").utf8))
        }
        let log = try NoteVerifierKeyTests.signer("log.example/a")
        let hello = try SignedNote(signing: "hello\n", with: [log])
        #expect(throws: TlogProof.Failure.checkpoint(.tooFewLines(1))) {
            try TlogProof(parsing: Array((head + "\n").utf8) + hello.bytes)
        }
    }

    @Test("every truncation of a good file is refused, and never traps")
    func truncations() throws {
        let (proof, _, _) = try TlogProofTests.fixture()
        let bytes = proof.bytes
        for count in 0..<bytes.count {
            #expect(throws: TlogProof.Failure.self) { try TlogProof(parsing: Array(bytes.prefix(count))) }
        }
    }

    @Test("every single-bit flip of a good file is refused, by parsing or by verification of the entry in its extra")
    func bitFlips() throws {
        let (proof, _, log) = try TlogProofTests.fixture()
        let bytes = proof.bytes
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= 1 << bit
                #expect(throws: TlogProof.Failure.self, "byte \(index) bit \(bit)") {
                    let parsed = try TlogProof(parsing: flipped)
                    try parsed.verify(entry: parsed.extra, origin: TlogProofTests.origin, keys: [log.verifierKey])
                }
            }
        }
    }

    @Test("a file over the size limit is refused before it is read")
    func size() throws {
        let huge = [UInt8](repeating: 0x41, count: (1 << 22) + 1)
        #expect(throws: TlogProof.Failure.tooLarge(size: (1 << 22) + 1, limit: 1 << 22)) {
            try TlogProof(parsing: huge)
        }
        // A big extra line within the limit is read; the note inside keeps its own limit.
        let extra = [UInt8](repeating: 7, count: 1 << 20)
        let (proof, _, _) = try TlogProofTests.fixture()
        let big = try TlogProof(
            extra: extra,
            index: proof.index,
            inclusionProof: proof.inclusionProof,
            note: proof.note
        )
        #expect(try TlogProof(parsing: big.bytes).extra == extra)
    }

    @Test("every description names the problem")
    func descriptions() {
        let failures: [TlogProof.Failure] = [
            .tooLarge(size: 2, limit: 1), .missingHeader, .malformedExtra, .missingIndex, .malformedIndex,
            .malformedHash(line: 3), .tooManyHashes, .missingCheckpoint, .note(.noSignatures),
            .checkpoint(.malformedSize), .inclusion(.rootMismatch),
        ]
        for failure in failures { #expect(!failure.description.isEmpty) }
    }
}
