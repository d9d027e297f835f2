import FuzzSupport
import Testing
import TransparencyLog

/// The tlog-witness add-checkpoint bodies: the spec's examples, and hostile bodies refused without a trap.
@Suite("add-checkpoint bodies (tlog-witness)")
struct AddCheckpointRequestTests {
    /// c2sp.org/tlog-witness "add-checkpoint", the example request body.
    static let specRequest =
        "old 20852014\n"
        + "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
        + "jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n"
        + "5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n"
        + "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n"
        + "\n"
        + SpecExamples.sofaNote
        + "\u{2014} example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6Q"
        + "UXTS5Rovnzv++qbSzm9Q=\n"

    /// The example response body.
    static let specResponse =
        "\u{2014} witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVjyQLrdk3DXDqI5G2H"
        + "gLatVs0pWh6Up69HVOw==\n"
        + "\u{2014} witness.example/w1 I7rEps0pvK2UqkS2gSpVUDhrhVtQV9lgF6pRrWAvjJHjyWpW7VcE3SiOlVlbQNt64vWhO+DlkL0+UfzuOBM"
        + "h9ChdMkP1vi/lCAsmlw==\n"
        + "\u{2014} witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYKA7nC3HNJhm/kWl7o"
        + "JlqU3rXXvpysAdyP3wQ==\n"

    @Test func theSpecsExampleRequestParsesAndRendersBack() throws {
        let request = try AddCheckpointRequest(parsing: Array(Self.specRequest.utf8))
        #expect(request.oldSize == 20_852_014)
        #expect(request.proof.count == 4 && request.proof.allSatisfy { $0.count == 32 })
        #expect(request.checkpoint.text == SpecExamples.sofaText)
        #expect(request.checkpoint.signatures.count == 2)
        #expect(request.bytes == Array(Self.specRequest.utf8))
    }

    @Test func theSpecsExampleResponseParses() throws {
        let lines = try AddCheckpointResponse.cosignatures(parsing: Array(Self.specResponse.utf8))
        #expect(lines.map(\.keyName) == ["witness.example/w1", "witness.example/w1", "witness.example/w2"])
        #expect(AddCheckpointResponse.cosignaturesBody(lines) == Array(Self.specResponse.utf8))
    }

    @Test func anEmptyProofAndOldZero() throws {
        let body = "old 0\n\n" + SpecExamples.sofaNote
        let request = try AddCheckpointRequest(parsing: Array(body.utf8))
        #expect(request.oldSize == 0 && request.proof.isEmpty)
        #expect(request.bytes == Array(body.utf8))
    }

    @Test(arguments: [
        ("", AddCheckpointRequest.Failure.malformedOldSize),
        ("old\n\n", .malformedOldSize),
        ("old 01\n\n", .malformedOldSize),
        ("old -1\n\n", .malformedOldSize),
        ("old 18446744073709551616\n\n", .malformedOldSize),
        ("Old 1\n\n", .malformedOldSize),
        ("old  1\n\n", .malformedOldSize),
        ("old 1", .malformedOldSize),
        ("old 1\n", .missingBlankLine),
        ("old 1\nAAAA\n\n", .malformedProofLine(line: 1)),
        ("old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw\n\n", .malformedProofLine(line: 1)),
        ("old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkax=\n\n", .malformedProofLine(line: 1)),
        ("old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n", .missingBlankLine),
    ])
    func malformedHeadsAreRefused(body: String, failure: AddCheckpointRequest.Failure) {
        let bytes = Array(body.utf8) + (body.hasSuffix("\n\n") ? Array(SpecExamples.sofaNote.utf8) : [])
        #expect(throws: failure) { try AddCheckpointRequest(parsing: bytes) }
    }

    @Test func limitsAreEnforced() throws {
        let hash = "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
        let ok = "old 1\n" + String(repeating: hash, count: 63) + "\n" + SpecExamples.sofaNote
        #expect(try AddCheckpointRequest(parsing: Array(ok.utf8)).proof.count == 63)
        let tooMany = "old 1\n" + String(repeating: hash, count: 64) + "\n" + SpecExamples.sofaNote
        #expect(throws: AddCheckpointRequest.Failure.tooManyProofLines(64)) {
            try AddCheckpointRequest(parsing: Array(tooMany.utf8))
        }
        var limits = AddCheckpointRequest.Limits()
        limits.maxBytes = 100
        #expect(throws: AddCheckpointRequest.Failure.tooLarge(size: ok.utf8.count, limit: 100)) {
            try AddCheckpointRequest(parsing: Array(ok.utf8), limits: limits)
        }
        #expect(throws: AddCheckpointRequest.Failure.self) {
            try AddCheckpointRequest(parsing: Array("old 1\n\nnot a note\n".utf8))
        }
        #expect(throws: AddCheckpointRequest.Failure.malformedProofLine(line: 2)) {
            try AddCheckpointRequest(
                oldSize: 1,
                proof: [[UInt8](repeating: 0, count: 32), [1]],
                checkpoint: try SignedNote(parsing: Array(SpecExamples.sofaNote.utf8))
            )
        }
    }

    @Test func malformedResponsesAreRefused() {
        let line = "\u{2014} w AAAAAAA=\n"
        #expect(throws: AddCheckpointResponse.Failure.empty) { try AddCheckpointResponse.cosignatures(parsing: []) }
        #expect(throws: AddCheckpointResponse.Failure.empty) {
            try AddCheckpointResponse.cosignatures(parsing: Array(line.utf8.dropLast()))
        }
        for bad in [
            "\n", "- w AAAAAAA=\n", "\u{2014} w AAAA\n", "\u{2014} w AAAAAAA=\r\n", "\u{2014} w\n", line + "\n",
        ] {
            #expect(throws: AddCheckpointResponse.Failure.self) {
                try AddCheckpointResponse.cosignatures(parsing: Array(bad.utf8))
            }
        }
        #expect(throws: AddCheckpointResponse.Failure.tooManySignatures(count: 17, limit: 16)) {
            try AddCheckpointResponse.cosignatures(parsing: Array(String(repeating: line, count: 17).utf8))
        }
        #expect(throws: AddCheckpointResponse.Failure.tooLarge(size: 20_000, limit: 16 << 10)) {
            try AddCheckpointResponse.cosignatures(parsing: [UInt8](repeating: 0x41, count: 20_000))
        }
        #expect(throws: AddCheckpointResponse.Failure.self) {
            try AddCheckpointResponse.cosignatures(parsing: [0xFF, 0x0A])
        }
        for bad in ["", "\n", "5", "05\n", "-1\n", "5\n\n", "18446744073709551616\n", " 5\n", "5 \n"] {
            #expect(throws: AddCheckpointResponse.Failure.malformedSize) {
                try AddCheckpointResponse.size(parsing: Array(bad.utf8))
            }
        }
        #expect((try? AddCheckpointResponse.size(parsing: Array("0\n".utf8))) == 0)
        #expect((try? AddCheckpointResponse.size(parsing: Array("18446744073709551615\n".utf8))) == .max)
    }

    @Test func truncationsAndBitFlipsNeverTrap() {
        let body = Array(Self.specRequest.utf8)
        var accepted: [Int] = []
        for length in 0...body.count {
            if (try? AddCheckpointRequest(parsing: Array(body.prefix(length)))) != nil { accepted.append(length) }
        }
        // Only whole notes parse: the body, and the body without its second signature line (a note with one).
        let cut = body.count - (Self.specRequest.utf8.split(separator: 0x0A).last.map(\.count) ?? 0) - 1
        #expect(accepted == [cut, body.count])
        for index in body.indices {
            var flipped = body
            flipped[index] ^= 0x20
            if let request = try? AddCheckpointRequest(parsing: flipped) {
                #expect(request.bytes == flipped)
            }
        }
        let response = Array(Self.specResponse.utf8)
        for length in 0...response.count {
            _ = try? AddCheckpointResponse.cosignatures(parsing: Array(response.prefix(length)))
        }
    }
}
