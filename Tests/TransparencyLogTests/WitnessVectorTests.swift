import Crypto
import Foundation
import Testing
import TransparencyLog

/// docs/test-vectors/witness-v1.json, reproduced byte for byte: the witness key's ID and vkey (type 0x04), the
/// cosignature/v1 signed message, signature and line on the transparency-v1.json checkpoint, and an add-checkpoint
/// request and its answers. verify_witness.py computes the same file from the specs in Python.
@Suite("Witness test vectors (witness-v1.json)")
struct WitnessVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/test-vectors")

    struct Vectors: Decodable {
        struct Witness: Decodable { let seed, name, publicKey, keyId, vkey: String }
        struct Cosig: Decodable {
            let timestamp: UInt64
            let message, signature, line, cosignedNote: String
        }
        struct Add: Decodable {
            let oldSize: UInt64
            let proof: [String]
            let body, response, conflictBody: String
        }
        let witness: Witness
        let cosignature: Cosig
        let addCheckpoint: Add
    }

    static func load() throws -> (Vectors, TransparencyVectorTests.Vectors) {
        (
            try JSONDecoder().decode(
                Vectors.self,
                from: Data(contentsOf: directory.appendingPathComponent("witness-v1.json"))
            ),
            try TransparencyVectorTests.load()
        )
    }

    static func signer(_ v: Vectors) throws -> CosignatureSigner {
        try CosignatureSigner(
            name: v.witness.name,
            privateKey: Curve25519.Signing.PrivateKey(rawRepresentation: SpecExamples.hex(v.witness.seed))
        )
    }

    @Test func theWitnessKeyIDAndVKeyUseTypeByte4() throws {
        let (v, _) = try Self.load()
        let key = try Self.signer(v).verifierKey
        #expect(TransparencyVectorTests.hex(key.publicKeyBytes) == v.witness.publicKey)
        #expect(key.keyID == UInt32(v.witness.keyId, radix: 16))
        #expect(key.vkey == v.witness.vkey)
        #expect(try CosignatureVerifierKey(parsing: v.witness.vkey) == key)
        // The same key as a note key (type 0x01) has another ID: a cosignature cannot pass for a log signature.
        let noteKey = try NoteVerifierKey(name: v.witness.name, publicKey: key.publicKey)
        #expect(noteKey.keyID != key.keyID)
        #expect(throws: NoteVerifierKey.Failure.unsupportedSignatureType(0x04)) {
            try NoteVerifierKey(parsing: v.witness.vkey)
        }
        #expect(throws: NoteVerifierKey.Failure.unsupportedSignatureType(0x01)) {
            try CosignatureVerifierKey(parsing: noteKey.vkey)
        }
    }

    @Test func theCosignatureIsReproducedByteForByte() throws {
        let (v, t) = try Self.load()
        #expect(
            Cosignature.message(text: t.checkpoint.text, timestamp: v.cosignature.timestamp)
                == Array(v.cosignature.message.utf8)
        )
        let signer = try Self.signer(v)
        let line = try signer.cosign(text: t.checkpoint.text, timestamp: v.cosignature.timestamp)
        #if !canImport(Darwin)
        // Ed25519 as BoringSSL implements it is deterministic (CryptoKit randomizes signatures).
        #expect(line.line == v.cosignature.line)
        #expect(TransparencyVectorTests.hex(Array(line.signature.suffix(64))) == v.cosignature.signature)
        #endif
        // The vector's line verifies, and the cosigned note still verifies with the log's key.
        let note = try SignedNote(parsing: Array(v.cosignature.cosignedNote.utf8))
        #expect(try signer.verifierKey.verify(note) == [v.cosignature.timestamp])
        let logKey = try NoteVerifierKey(parsing: t.key.vkey)
        #expect(try note.verify(keys: [logKey]) == [logKey])
    }

    @Test func theAddCheckpointRequestIsReproducedByteForByte() throws {
        let (v, t) = try Self.load()
        let request = try AddCheckpointRequest(
            oldSize: v.addCheckpoint.oldSize,
            proof: v.addCheckpoint.proof.map(SpecExamples.hex),
            checkpoint: try SignedNote(parsing: Array(t.checkpoint.note.utf8))
        )
        #expect(request.bytes == Array(v.addCheckpoint.body.utf8))
        #expect(try AddCheckpointRequest(parsing: Array(v.addCheckpoint.body.utf8)) == request)
        // The proof is RFC 6962's from 3 to 5 over the vector's tree.
        let checkpoint = try Checkpoint(parsing: request.checkpoint.text)
        let old = try #require(MerkleTree(leaves: t.tree.leaves.map(SpecExamples.hex)).root(size: 3))
        try MerkleProof.verifyConsistency(
            first: 3,
            second: 5,
            firstRoot: old,
            secondRoot: checkpoint.rootHash,
            proof: request.proof
        )
        let lines = try AddCheckpointResponse.cosignatures(parsing: Array(v.addCheckpoint.response.utf8))
        #expect(AddCheckpointResponse.cosignaturesBody(lines) == Array(v.addCheckpoint.response.utf8))
        #expect(try AddCheckpointResponse.size(parsing: Array(v.addCheckpoint.conflictBody.utf8)) == 3)
        #expect(AddCheckpointResponse.sizeBody(3) == Array(v.addCheckpoint.conflictBody.utf8))
    }
}
