import Crypto
import Testing
import TransparencyLog

/// Signed notes (c2sp.org/signed-note "Format" and "Signatures"): the spec's examples, round trips, and hostile
/// bytes refused with the rule they break.
@Suite("Signed notes")
struct SignedNoteTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("the spec's vkey example verifies its example note, and the note renders back exactly")
    func specVKeyExample() throws {
        let key = try NoteVerifierKey(parsing: SpecExamples.fooVKey)
        let note = try SignedNote(parsing: Self.bytes(SpecExamples.fooNote))
        #expect(note.text == "This is an example message.\n")
        #expect(note.signatures.count == 1)
        #expect(note.signatures[0].keyName == "example.com/foo")
        #expect(note.signatures[0].keyID == 0x530d_903a)
        #expect(note.signatures[0].signature.count == 64)
        #expect(try note.verify(keys: [key]) == [key])
        #expect(note.bytes == Self.bytes(SpecExamples.fooNote))
    }

    @Test("the spec's opening note: the text ends at the last empty line, even when it holds one")
    func specOpeningExample() throws {
        let note = try SignedNote(parsing: Self.bytes(SpecExamples.quasimodoNote))
        #expect(note.text == SpecExamples.quasimodoText)
        #expect(note.signatures.map(\.keyName) == ["quasimodo.example/salvatore"])
        #expect(note.signatures[0].keyID == 0x367b_a04b)
        #expect(note.signatures[0].signature.count == 64)
        #expect(note.bytes == Self.bytes(SpecExamples.quasimodoNote))
        // Its key is not given: a verifier knowing other keys ignores the signature, and so refuses the note.
        let foo = try NoteVerifierKey(parsing: SpecExamples.fooVKey)
        #expect(throws: SignedNote.Failure.noKnownSignature) { try note.verify(keys: [foo]) }
        let sameName = try NoteVerifierKey(name: "quasimodo.example/salvatore", publicKey: foo.publicKey)
        #expect(throws: SignedNote.Failure.noKnownSignature) { try note.verify(keys: [sameName]) }
    }

    @Test("sign, render, parse, verify: the same note, and each key that signed")
    func roundTrip() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a", seed: 1)
        let witness = try NoteVerifierKeyTests.signer("witness.example/w", seed: 2)
        for text in ["a\n", "\n", "two\n\nparagraphs\n", "\u{2014} looks like a signature\n", "\u{E8}\u{1F600}\n"] {
            let note = try SignedNote(signing: text, with: [log, witness])
            let parsed = try SignedNote(parsing: note.bytes)
            #expect(parsed == note)
            #expect(parsed.text == text)
            #expect(
                try parsed.verify(keys: [log.verifierKey, witness.verifierKey]) == [
                    log.verifierKey, witness.verifierKey,
                ]
            )
            #expect(try parsed.verify(keys: [witness.verifierKey]) == [witness.verifierKey])
        }
    }

    @Test("unknown keys are ignored, even sharing a name or an ID (not both) with a known key")
    func unknownKeysIgnored() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a", seed: 1)
        let other = try NoteVerifierKeyTests.signer("log.example/a", seed: 3)
        let text = "checkpoint\n"
        let good = try log.signature(for: text)
        let sameNameOtherKey = try other.signature(for: text)
        let sameIDOtherName = try SignedNote.Signature(
            keyName: "log.example/b",
            keyID: log.verifierKey.keyID,
            signature: [UInt8](repeating: 0, count: 64)
        )
        let note = try SignedNote(text: text, signatures: [sameNameOtherKey, sameIDOtherName, good])
        #expect(try note.verify(keys: [log.verifierKey]) == [log.verifierKey])
        let onlyUnknown = try SignedNote(text: text, signatures: [sameNameOtherKey, sameIDOtherName])
        #expect(throws: SignedNote.Failure.noKnownSignature) { try onlyUnknown.verify(keys: [log.verifierKey]) }
        #expect(throws: SignedNote.Failure.noKnownSignature) { try note.verify(keys: []) }
    }

    @Test("a known key's signature that fails refuses the whole note, even beside a good one")
    func badKnownSignature() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a", seed: 1)
        let witness = try NoteVerifierKeyTests.signer("witness.example/w", seed: 2)
        let text = "checkpoint\n"
        let good = try log.signature(for: text)
        var flipped = try witness.signature(for: text).signature
        flipped[10] ^= 1
        let bad = try SignedNote.Signature(keyName: witness.name, keyID: witness.verifierKey.keyID, signature: flipped)
        let short = try SignedNote.Signature(keyName: witness.name, keyID: witness.verifierKey.keyID, signature: [1])
        let keys = [log.verifierKey, witness.verifierKey]
        for signature in [bad, short] {
            let note = try SignedNote(text: text, signatures: [good, signature])
            #expect(throws: SignedNote.Failure.badSignature(keyName: witness.name, keyID: witness.verifierKey.keyID)) {
                try note.verify(keys: keys)
            }
        }
        // Another text under a good signature.
        let moved = try SignedNote(text: "checkpoint 2\n", signatures: [good])
        #expect(throws: SignedNote.Failure.badSignature(keyName: log.name, keyID: log.verifierKey.keyID)) {
            try moved.verify(keys: keys)
        }
    }

    @Test("two different known keys with one name and ID are refused; the same key twice is one key")
    func ambiguousKeys() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a", seed: 1)
        let note = try SignedNote(signing: "x\n", with: [log, log])
        #expect(try note.verify(keys: [log.verifierKey, log.verifierKey]) == [log.verifierKey])
        // Two 32-byte public keys whose IDs under this name collide (found by a birthday search over SHA-256).
        let name = "log.example/collide"
        let first = try NoteVerifierKey(
            name: name,
            publicKey: .init(
                rawRepresentation: SpecExamples.hex("5c18e511f1bf79d74e05f5e777bbaf31ac79f676a98ca5c898267ccc631915ac")
            )
        )
        let second = try NoteVerifierKey(
            name: name,
            publicKey: .init(
                rawRepresentation: SpecExamples.hex("eab54f0a275318337ad6d9f6664211d7ad620bde4e2056a225e7aa34d1da1732")
            )
        )
        #expect(first.keyID == 0x0252_fa30 && second.keyID == 0x0252_fa30 && first != second)
        #expect(throws: SignedNote.Failure.ambiguousKeys(keyName: name, keyID: 0x0252_fa30)) {
            try note.verify(keys: [log.verifierKey, first, second])
        }
    }

    @Test("what cannot be signed is refused before signing")
    func unsignable() throws {
        let log = try NoteVerifierKeyTests.signer("log.example/a")
        #expect(throws: SignedNote.Failure.textNotNewlineTerminated) { try SignedNote(signing: "", with: [log]) }
        #expect(throws: SignedNote.Failure.textNotNewlineTerminated) { try SignedNote(signing: "a", with: [log]) }
        #expect(throws: SignedNote.Failure.controlCharacter) { try SignedNote(signing: "a\r\n", with: [log]) }
        #expect(throws: SignedNote.Failure.controlCharacter) { try SignedNote(signing: "a\tb\n", with: [log]) }
        #expect(throws: SignedNote.Failure.noSignatures) { try SignedNote(signing: "a\n", with: []) }
        #expect(throws: SignedNote.Failure.invalidKeyName(line: nil)) {
            try SignedNote.Signature(keyName: "a b", keyID: 1, signature: [1])
        }
        #expect(throws: SignedNote.Failure.signatureTooShort(line: nil)) {
            try SignedNote.Signature(keyName: "a", keyID: 1, signature: [])
        }
        #expect(throws: NoteVerifierKey.Failure.invalidKeyName) {
            try NoteSigner(name: "a+b", privateKey: Curve25519.Signing.PrivateKey())
        }
    }
}
