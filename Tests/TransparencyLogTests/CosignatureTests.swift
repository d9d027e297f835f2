import Crypto
import Testing
import TransparencyLog

/// cosignature/v1 (c2sp.org/tlog-cosignature): the spec's examples, signing and verifying, and every way a
/// cosignature line can be wrong.
@Suite("Cosignatures (tlog-cosignature)")
struct CosignatureTests {
    static let signer = try! CosignatureSigner(name: "witness.example/w1", privateKey: .init())

    static func cosigned(_ text: String = SpecExamples.sofaText, time: UInt64 = 1_679_315_147) throws -> SignedNote {
        let note = try SignedNote(parsing: Array(SpecExamples.sofaNote.utf8))
        return try SignedNote(
            text: note.text,
            signatures: note.signatures + [signer.cosign(text: text, timestamp: time)]
        )
    }

    @Test func theSpecsSignedMessageExample() {
        // "Ed25519 signed message": the header line, the timestamp line, the checkpoint body.
        let expected =
            "cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
            + "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
        #expect(Cosignature.message(text: SpecExamples.sofaText, timestamp: 1_679_315_147) == Array(expected.utf8))
        #expect(Cosignature.message(text: "o\n1\nh\n", timestamp: 0) == Array("cosignature/v1\ntime 0\no\n1\nh\n".utf8))
    }

    @Test func theSpecsCosignedCheckpointParsesAndItsBlobIsKeyIDTimestampSignature() throws {
        let note = try SignedNote(parsing: Array(SpecExamples.cosignedSofaNote.utf8))
        let line = try #require(note.signatures.last)
        #expect(line.keyName == "witness.example.com/w1")
        #expect(line.keyID == 0x8d66_cf3f)
        #expect(line.signature.count == 72)
        // The timestamp is the one of the spec's signed message example.
        #expect(line.signature.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == 1_679_315_147)
    }

    @Test func aCosignatureVerifiesAndTheLogSignatureStillDoes() throws {
        let note = try Self.cosigned()
        #expect(try Self.signer.verifierKey.verify(note) == [1_679_315_147])
        // Lines of other keys are ignored; a note without this key's line has no cosignature of it.
        let other = try CosignatureSigner(name: "witness.example/w2", privateKey: .init())
        #expect(try other.verifierKey.verify(note) == [])
        let plain = try SignedNote(parsing: Array(SpecExamples.sofaNote.utf8))
        #expect(try Self.signer.verifierKey.verify(plain) == [])
    }

    @Test func aCosignatureOfAnotherCheckpointOrTimeIsRefused() throws {
        let note = try SignedNote(parsing: Array(SpecExamples.sofaNote.utf8))
        let key = Self.signer.verifierKey
        let otherText = try Self.signer.cosign(text: "example.com/behind-the-sofa\n20852164\nAAAA\n", timestamp: 5)
        let forged = try SignedNote(text: note.text, signatures: note.signatures + [otherText])
        #expect(throws: Cosignature.Failure.badCosignature(keyName: key.name, keyID: key.keyID)) {
            try key.verify(forged)
        }
        // The timestamp is signed: changing it breaks the signature.
        var line = try #require(try Self.cosigned().signatures.last)
        var bytes = line.signature
        bytes[7] ^= 0x01
        line = try SignedNote.Signature(keyName: line.keyName, keyID: line.keyID, signature: bytes)
        let retimed = try SignedNote(text: note.text, signatures: note.signatures + [line])
        #expect(throws: Cosignature.Failure.self) { try key.verify(retimed) }
    }

    @Test func everyFlippedBitOfTheBlobIsRefused() throws {
        let note = try Self.cosigned()
        let line = try #require(note.signatures.last)
        for index in line.signature.indices {
            for bit in 0..<8 {
                var bytes = line.signature
                bytes[index] ^= UInt8(1 << bit)
                let bad = try SignedNote.Signature(keyName: line.keyName, keyID: line.keyID, signature: bytes)
                let tampered = try SignedNote(text: note.text, signatures: Array(note.signatures.dropLast()) + [bad])
                #expect(throws: Cosignature.Failure.self) { try Self.signer.verifierKey.verify(tampered) }
            }
        }
    }

    @Test func wrongLengthsAndOversizedTimestampsAreRefused() throws {
        let note = try SignedNote(parsing: Array(SpecExamples.sofaNote.utf8))
        let key = Self.signer.verifierKey
        for count in [1, 64, 71, 73, 200] {
            let line = try SignedNote.Signature(
                keyName: key.name,
                keyID: key.keyID,
                signature: [UInt8](repeating: 7, count: count)
            )
            let bad = try SignedNote(text: note.text, signatures: note.signatures + [line])
            #expect(throws: Cosignature.Failure.wrongLength(count)) { try key.verify(bad) }
        }
        let huge = try SignedNote.Signature(
            keyName: key.name,
            keyID: key.keyID,
            signature: [0x80] + [UInt8](repeating: 0, count: 71)
        )
        let bad = try SignedNote(text: note.text, signatures: note.signatures + [huge])
        #expect(throws: Cosignature.Failure.timestampTooLarge(1 << 63)) { try key.verify(bad) }
        #expect(throws: Cosignature.Failure.timestampTooLarge(1 << 63)) {
            try Self.signer.cosign(text: SpecExamples.sofaText, timestamp: 1 << 63)
        }
        _ = try Self.signer.cosign(text: SpecExamples.sofaText, timestamp: Cosignature.maxTimestamp)
    }

    @Test func vkeysOfCosignersParseStrictly() throws {
        let key = Self.signer.verifierKey
        #expect(try CosignatureVerifierKey(parsing: key.vkey) == key)
        var parts = key.vkey.split(separator: "+", maxSplits: 2).map(String.init)
        parts[1] = "00000000"
        #expect(throws: NoteVerifierKey.Failure.self) {
            try CosignatureVerifierKey(parsing: parts.joined(separator: "+"))
        }
        for text in ["", "+", "a+b+c", "name+0000000+BAAA", "na me+00000000+BA==", key.vkey + "=", key.vkey + "\n"] {
            #expect(throws: NoteVerifierKey.Failure.self) { try CosignatureVerifierKey(parsing: text) }
        }
        #expect(throws: NoteVerifierKey.Failure.invalidKeyName) {
            try CosignatureSigner(name: "with space", privateKey: .init())
        }
    }
}
