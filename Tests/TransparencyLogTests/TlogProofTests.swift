import Testing
import TransparencyLog

/// Proof files (c2sp.org/tlog-proof@v1 "Format" and "Verifying a tlog proof"): the spec's example, round trips and
/// verification over a real tree, hostile files refused with the rule they break.
@Suite("Proof files")
struct TlogProofTests {
    static let origin = "log.example/a"

    /// A log of `count` leaves, its signed checkpoint, and the proof file of leaf `index` (with the leaf as extra).
    static func fixture(count: Int = 7, index: Int = 5) throws -> (proof: TlogProof, leaves: [[UInt8]], log: NoteSigner)
    {
        let log = try NoteVerifierKeyTests.signer(origin, seed: 1)
        let leaves = (0..<count).map { Array("entry \($0)".utf8) }
        let tree = MerkleTree(leaves: leaves)
        let checkpoint = try Checkpoint(origin: origin, size: tree.size, rootHash: tree.root()!)
        let proof = try TlogProof(
            extra: leaves[index],
            index: UInt64(index),
            inclusionProof: tree.inclusionProof(index: UInt64(index), size: tree.size)!,
            note: checkpoint.sign(with: [log])
        )
        return (proof, leaves, log)
    }

    @Test("the spec's example: its elided signatures are not base64; with real ones, every part reads as shown")
    func specExample() throws {
        let elided =
            SpecExamples.fancyProofHead + SpecExamples.fancyCheckpointText + "\n"
            + SpecExamples.fancyElidedSignatures
        #expect(throws: TlogProof.Failure.note(.malformedSignature(line: 1))) {
            try TlogProof(parsing: Array(elided.utf8))
        }
        let log = try NoteVerifierKeyTests.signer("example.com/fancylog", seed: 9)
        let note = try SignedNote(signing: SpecExamples.fancyCheckpointText, with: [log])
        let file = Array(SpecExamples.fancyProofHead.utf8) + note.bytes
        let proof = try TlogProof(parsing: file)
        #expect(proof.extra.count == 39)
        #expect(proof.extra.starts(with: Array("age-v1.2.1-darwin-arm64.tar.gz".utf8)))
        #expect(proof.index == 73_894)
        #expect(proof.inclusionProof.count == 5)
        #expect(proof.checkpoint.origin == "example.com/fancylog")
        #expect(proof.checkpoint.size == 109_482)
        #expect(proof.bytes == file)
        // Its five hashes are an illustration: a tree of 109482 leaves needs 17 for that index.
        #expect(throws: TlogProof.Failure.inclusion(.wrongLength(expected: 17, found: 5))) {
            try proof.verify(entry: proof.extra, origin: "example.com/fancylog", keys: [log.verifierKey])
        }
    }

    @Test("every leaf of trees up to 9 leaves: render, parse, verify; another entry or origin or key is refused")
    func roundTripAndVerify() throws {
        for count in 1...9 {
            for index in 0..<count {
                let (proof, leaves, log) = try Self.fixture(count: count, index: index)
                let parsed = try TlogProof(parsing: proof.bytes)
                #expect(parsed == proof)
                #expect(parsed.bytes == proof.bytes)
                let checkpoint = try parsed.verify(entry: parsed.extra, origin: Self.origin, keys: [log.verifierKey])
                #expect(checkpoint.size == UInt64(count))
                let other = leaves[(index + 1) % count]
                if count > 1 {
                    #expect(throws: TlogProof.Failure.inclusion(.rootMismatch)) {
                        try parsed.verify(entry: other, origin: Self.origin, keys: [log.verifierKey])
                    }
                }
            }
        }
        let (proof, _, log) = try Self.fixture()
        #expect(throws: TlogProof.Failure.checkpoint(.originMismatch(expected: "log.example/b", found: Self.origin))) {
            try proof.verify(entry: proof.extra, origin: "log.example/b", keys: [log.verifierKey])
        }
        let stranger = try NoteVerifierKeyTests.signer(Self.origin, seed: 2)
        #expect(throws: TlogProof.Failure.checkpoint(.note(.noKnownSignature))) {
            try proof.verify(entry: proof.extra, origin: Self.origin, keys: [stranger.verifierKey])
        }
    }

    @Test("no extra data: the extra line is omitted, and the proof still verifies with the entry given")
    func noExtra() throws {
        let (proof, leaves, log) = try Self.fixture()
        let bare = try TlogProof(index: proof.index, inclusionProof: proof.inclusionProof, note: proof.note)
        #expect(!String(decoding: bare.bytes, as: UTF8.self).contains("extra"))
        let parsed = try TlogProof(parsing: bare.bytes)
        #expect(parsed.extra.isEmpty)
        try parsed.verify(entry: leaves[5], origin: Self.origin, keys: [log.verifierKey])
    }

    @Test("a wrong index, a tampered hash, a dropped or an added hash: each refused by the inclusion check")
    func tampered() throws {
        let (proof, _, log) = try Self.fixture()
        let keys = [log.verifierKey]
        func variant(index: UInt64? = nil, hashes: [[UInt8]]? = nil) throws -> TlogProof {
            try TlogProof(
                extra: proof.extra,
                index: index ?? proof.index,
                inclusionProof: hashes ?? proof.inclusionProof,
                note: proof.note
            )
        }
        var flipped = proof.inclusionProof
        flipped[0][0] ^= 1
        let cases: [(TlogProof, MerkleProof.Failure)] = [
            (try variant(index: 4), .rootMismatch),
            (try variant(index: 7), .indexBeyondSize(index: 7, size: 7)),
            (try variant(index: UInt64.max), .indexBeyondSize(index: UInt64.max, size: 7)),
            (try variant(hashes: flipped), .rootMismatch),
            (try variant(hashes: Array(proof.inclusionProof.dropLast())), .wrongLength(expected: 3, found: 2)),
            (
                try variant(hashes: proof.inclusionProof + [proof.inclusionProof[0]]),
                .wrongLength(expected: 3, found: 4)
            ),
        ]
        for (bad, failure) in cases {
            let reread = try TlogProof(parsing: bad.bytes)
            #expect(throws: TlogProof.Failure.inclusion(failure)) {
                try reread.verify(entry: proof.extra, origin: Self.origin, keys: keys)
            }
        }
    }
}
