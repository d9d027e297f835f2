import Crypto
import Foundation
import Testing
import TransparencyLog

/// docs/test-vectors/transparency-v1.json, reproduced byte for byte: the key from its seed, the key ID and vkey, the
/// tree, the signed checkpoint and the proof file. The same file is checked by verify_transparency.py, written from
/// the specs in Python.
@Suite("Transparency test vectors (transparency-v1.json)")
struct TransparencyVectorTests {
    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/test-vectors/transparency-v1.json")

    struct Vectors: Decodable {
        struct Key: Decodable {
            let seed, name, publicKey, keyId, vkey: String
        }
        struct Tree: Decodable {
            let leaves, leafHashes: [String]
            let size: UInt64
            let rootHash: String
        }
        struct Checkpoint: Decodable {
            let origin, text, signature, note: String
        }
        struct Proof: Decodable {
            let index: UInt64
            let extra: String
            let hashes: [String]
            let file: String
        }
        let key: Key
        let tree: Tree
        let checkpoint: Checkpoint
        let proof: Proof
    }

    static func load() throws -> Vectors {
        try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("the key: public key from the seed, key ID, vkey both ways")
    func key() throws {
        let v = try Self.load()
        let signer = try NoteSigner(
            name: v.key.name,
            privateKey: Curve25519.Signing.PrivateKey(rawRepresentation: SpecExamples.hex(v.key.seed))
        )
        #expect(Self.hex(signer.verifierKey.publicKeyBytes) == v.key.publicKey)
        #expect(NoteEncodingHex.hex32(signer.verifierKey.keyID) == v.key.keyId)
        #expect(signer.verifierKey.vkey == v.key.vkey)
        #expect(try NoteVerifierKey(parsing: v.key.vkey) == signer.verifierKey)
    }

    @Test("the tree, the checkpoint text and its signed note")
    func checkpoint() throws {
        let v = try Self.load()
        let tree = MerkleTree(leaves: v.tree.leaves.map(SpecExamples.hex))
        #expect(tree.leafHashes.map(Self.hex) == v.tree.leafHashes)
        #expect(tree.size == v.tree.size)
        let root = try #require(tree.root())
        #expect(Self.hex(root) == v.tree.rootHash)
        let checkpoint = try Checkpoint(origin: v.checkpoint.origin, size: tree.size, rootHash: root)
        #expect(checkpoint.text == v.checkpoint.text)

        let signer = try NoteSigner(
            name: v.key.name,
            privateKey: Curve25519.Signing.PrivateKey(rawRepresentation: SpecExamples.hex(v.key.seed))
        )
        let note = try checkpoint.sign(with: [signer])
        #if canImport(Darwin)
        // CryptoKit's Ed25519 signatures are randomized: check ours verifies, and the stored one below.
        #expect(try note.verify(keys: [signer.verifierKey]) == [signer.verifierKey])
        #else
        // BoringSSL's are RFC 8032's deterministic ones: the very bytes.
        #expect(Self.hex(note.signatures[0].signature) == v.checkpoint.signature)
        #expect(note.bytes == Array(v.checkpoint.note.utf8))
        #endif
        let stored = try SignedNote(parsing: Array(v.checkpoint.note.utf8))
        let opened = try Checkpoint(signedNote: stored, origin: v.checkpoint.origin, keys: [signer.verifierKey])
        #expect(opened == checkpoint)
    }

    @Test("the proof file: rendered from its parts, parsed back, verified")
    func proof() throws {
        let v = try Self.load()
        let leaves = v.tree.leaves.map(SpecExamples.hex)
        let tree = MerkleTree(leaves: leaves)
        let hashes = try #require(tree.inclusionProof(index: v.proof.index, size: tree.size))
        #expect(hashes.map(Self.hex) == v.proof.hashes)
        let note = try SignedNote(parsing: Array(v.checkpoint.note.utf8))
        let proof = try TlogProof(
            extra: SpecExamples.hex(v.proof.extra),
            index: v.proof.index,
            inclusionProof: hashes,
            note: note
        )
        #expect(proof.bytes == Array(v.proof.file.utf8))
        let parsed = try TlogProof(parsing: Array(v.proof.file.utf8))
        #expect(parsed == proof)
        let key = try NoteVerifierKey(parsing: v.key.vkey)
        let checkpoint = try parsed.verify(entry: parsed.extra, origin: v.checkpoint.origin, keys: [key])
        #expect(checkpoint.size == v.tree.size)
        #expect(parsed.extra == leaves[Int(v.proof.index)])
    }
}

/// Eight lowercase hex digits, as the vectors write key IDs.
enum NoteEncodingHex {
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
