import Testing
import TransparencyLog

/// Checkpoints (c2sp.org/tlog-checkpoint "Note text" and "Signatures"): the spec's example, round trips, hostile
/// texts refused with the rule they break.
@Suite("Checkpoints")
struct CheckpointTests {
    static let root = "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="

    @Test("the spec's checkpoint: its text, and its note with the log's signature and a witness's cosignature")
    func specExample() throws {
        let checkpoint = try Checkpoint(parsing: SpecExamples.sofaText)
        #expect(checkpoint.origin == "example.com/behind-the-sofa")
        #expect(checkpoint.size == 20_852_163)
        #expect(checkpoint.rootHash.count == 32)
        #expect(checkpoint.extensions.isEmpty)
        #expect(checkpoint.text == SpecExamples.sofaText)

        let note = try SignedNote(parsing: Array(SpecExamples.sofaNote.utf8))
        #expect(note.text == SpecExamples.sofaText)
        #expect(note.signatures.map(\.keyName) == ["example.com/behind-the-sofa"])
        #expect(note.signatures[0].keyID == 0x033d_e0ae)
        #expect(note.signatures[0].signature.count == 64)

        // c2sp.org/tlog-cosignature's example: the cosignature line is a note signature like any other (8 bytes of
        // timestamp, the spec's 1679315147, then 64 of Ed25519), ignored by a verifier that does not know the witness.
        let cosigned = try SignedNote(parsing: Array(SpecExamples.cosignedSofaNote.utf8))
        #expect(cosigned.text == SpecExamples.sofaText)
        #expect(cosigned.signatures.map(\.keyName) == ["example.com/behind-the-sofa", "witness.example.com/w1"])
        let cosignature = cosigned.signatures[1]
        #expect(cosignature.keyID == 0x8d66_cf3f)
        #expect(cosignature.signature.count == 72)
        #expect(cosignature.signature.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } == 1_679_315_147)
        #expect(cosigned.bytes == Array(SpecExamples.cosignedSofaNote.utf8))
        let other = try NoteVerifierKey(parsing: SpecExamples.fooVKey)
        #expect(throws: Checkpoint.Failure.note(.noKnownSignature)) {
            try Checkpoint(signedNote: cosigned, origin: "example.com/behind-the-sofa", keys: [other])
        }
    }

    @Test("render, parse, sign, open: the same checkpoint, extension lines and all")
    func roundTrip() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a", seed: 1)
        let witness = try NoteVerifierKeyTests.signer("witness.example/w", seed: 2)
        let root = [UInt8](repeating: 0xAB, count: 32)
        for (size, extensions) in [(UInt64(0), [String]()), (1, []), (UInt64.max, ["ext one", "\u{E8}"])] {
            let checkpoint = try Checkpoint(origin: "log.example/a", size: size, rootHash: root, extensions: extensions)
            #expect(try Checkpoint(parsing: checkpoint.text) == checkpoint)
            let note = try checkpoint.sign(with: [log, witness])
            let parsed = try SignedNote(parsing: note.bytes)
            #expect(try Checkpoint(signedNote: parsed, origin: "log.example/a", keys: [log.verifierKey]) == checkpoint)
            #expect(throws: Checkpoint.Failure.originMismatch(expected: "log.example/b", found: "log.example/a")) {
                try Checkpoint(signedNote: parsed, origin: "log.example/b", keys: [log.verifierKey])
            }
        }
        #expect(try Checkpoint(parsing: "o\n18446744073709551615\n\(Self.root)\n").size == UInt64.max)
    }

    @Test("a checkpoint whose note a known key signed badly is refused, before its text is read")
    func badSignature() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a", seed: 1)
        let signature = try log.signature(for: "log.example/a\n1\n\(Self.root)\n")
        let note = try SignedNote(text: "log.example/a\n2\n\(Self.root)\n", signatures: [signature])
        #expect(throws: Checkpoint.Failure.note(.badSignature(keyName: log.name, keyID: log.verifierKey.keyID))) {
            try Checkpoint(signedNote: note, origin: "log.example/a", keys: [log.verifierKey])
        }
        let notACheckpoint = try SignedNote(signing: "hello\n", with: [log])
        #expect(throws: Checkpoint.Failure.tooFewLines(1)) {
            try Checkpoint(signedNote: notACheckpoint, origin: "log.example/a", keys: [log.verifierKey])
        }
    }

    @Test("each malformed text is refused with its failure")
    func malformed() {
        let root = Self.root
        let cases: [(String, Checkpoint.Failure)] = [
            ("", .notNewlineTerminated),
            ("o\n1\n\(root)", .notNewlineTerminated),
            ("\n", .tooFewLines(1)),
            ("o\n1\n", .tooFewLines(2)),
            ("\n1\n\(root)\n", .emptyLine(1)),
            ("o\n\n\(root)\n", .emptyLine(2)),
            ("o\n1\n\n", .emptyLine(3)),
            ("o\n1\n\(root)\n\n", .emptyLine(4)),
            ("o\n1\n\(root)\next\n\nmore\n", .emptyLine(5)),
            ("o\n01\n\(root)\n", .malformedSize),
            ("o\n00\n\(root)\n", .malformedSize),
            ("o\n+1\n\(root)\n", .malformedSize),
            ("o\n-0\n\(root)\n", .malformedSize),
            ("o\n 1\n\(root)\n", .malformedSize),
            ("o\n1 \n\(root)\n", .malformedSize),
            ("o\n1.0\n\(root)\n", .malformedSize),
            ("o\n0x10\n\(root)\n", .malformedSize),
            ("o\n\u{661}\n\(root)\n", .malformedSize),
            ("o\n18446744073709551616\n\(root)\n", .malformedSize),
            ("o\n99999999999999999999999999\n\(root)\n", .malformedSize),
            ("o\n1\n\(root.dropLast())\n", .malformedRootHash),
            ("o\n1\n\(root)=\n", .malformedRootHash),
            ("o\n1\nCsUYapGGPo4dkMgIAUqom_Xajj7h2fB2MPA3j2jxq2I=\n", .malformedRootHash),
            ("o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2J=\n", .malformedRootHash),
            ("o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I\n", .malformedRootHash),
            ("o\n1\nAAAA\n", .malformedRootHash),
            ("o\n1\n\(root + root)\n", .malformedRootHash),
            ("o\tx\n1\n\(root)\n", .invalidLine),
            ("o\n1\n\(root)\next\r\n", .invalidLine),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text.debugDescription)") { try Checkpoint(parsing: text) }
        }
        // Origins the spec only recommends against are accepted: clients must not assume the URL form.
        #expect(throws: Never.self) { try Checkpoint(parsing: "any origin+at all\n0\n\(root)\n") }
    }

    @Test("what the format cannot carry is refused when built")
    func unbuildable() {
        let root = [UInt8](repeating: 0, count: 32)
        #expect(throws: Checkpoint.Failure.emptyLine(1)) { try Checkpoint(origin: "", size: 0, rootHash: root) }
        #expect(throws: Checkpoint.Failure.invalidLine) { try Checkpoint(origin: "a\nb", size: 0, rootHash: root) }
        #expect(throws: Checkpoint.Failure.emptyLine(4)) {
            try Checkpoint(origin: "o", size: 0, rootHash: root, extensions: [""])
        }
        #expect(throws: Checkpoint.Failure.invalidLine) {
            try Checkpoint(origin: "o", size: 0, rootHash: root, extensions: ["a\nb"])
        }
        #expect(throws: Checkpoint.Failure.malformedRootHash) { try Checkpoint(origin: "o", size: 0, rootHash: []) }
    }

    @Test("every description names the problem")
    func descriptions() {
        let failures: [Checkpoint.Failure] = [
            .notNewlineTerminated, .tooFewLines(2), .emptyLine(1), .invalidLine, .malformedSize, .malformedRootHash,
            .note(.noKnownSignature), .originMismatch(expected: "a", found: "b"),
        ]
        for failure in failures { #expect(!failure.description.isEmpty) }
    }
}
