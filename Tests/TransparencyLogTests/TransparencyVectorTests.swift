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
        struct Proofs: Decodable {
            struct Inclusion: Decodable {
                let size, index: UInt64
                let proof: [String]
            }
            struct Consistency: Decodable {
                let first, second: UInt64
                let proof: [String]
            }
            let roots: [String]
            let inclusion: [Inclusion]
            let consistency: [Consistency]
        }
        let key: Key
        let tree: Tree
        let checkpoint: Checkpoint
        let proof: Proof
        let proofs: Proofs
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

extension TransparencyVectorTests {
    /// The tree's tiles, grown one leaf at a time, as the collector stores them.
    static func tiles(_ leafHashes: [[UInt8]]) throws -> MerkleNodes {
        final class Store: @unchecked Sendable {
            var tiles: [String: [UInt8]] = [:]
        }
        let store = Store()
        let reader = MerkleTiles { level, index in store.tiles["\(level)/\(index)"] ?? [] }
        for (size, hash) in leafHashes.enumerated() {
            for tile in try reader.append(leafHashes: [hash], toSize: UInt64(size)) {
                store.tiles["\(tile.level)/\(tile.index)"] = tile.hashes
            }
        }
        return reader.nodes()
    }

    @Test("every root, inclusion proof and consistency proof of the small tree, from the tree and from its tiles")
    func everyProof() throws {
        let v = try Self.load()
        let tree = MerkleTree(leaves: v.tree.leaves.map(SpecExamples.hex))
        let nodes = try Self.tiles(tree.leafHashes)
        #expect(v.proofs.roots.count == Int(tree.size))
        for (offset, root) in v.proofs.roots.enumerated() {
            let size = UInt64(offset + 1)
            #expect(tree.root(size: size).map(Self.hex) == root)
            #expect(Self.hex(try nodes.root(size: size)) == root)
        }
        #expect(v.proofs.inclusion.count == 15 && v.proofs.consistency.count == 15)
        for case let c in v.proofs.inclusion {
            #expect(
                tree.inclusionProof(index: c.index, size: c.size)?.map(Self.hex) == c.proof,
                "\(c.index) in \(c.size)"
            )
            #expect(try nodes.inclusionProof(index: c.index, size: c.size).map(Self.hex) == c.proof)
            let proof = c.proof.map(SpecExamples.hex)
            let root = SpecExamples.hex(v.proofs.roots[Int(c.size) - 1])
            let leaf = tree.leafHashes[Int(c.index)]
            try MerkleProof.verifyInclusion(leafHash: leaf, index: c.index, size: c.size, proof: proof, root: root)
            if var changed = proof.first {
                changed[0] ^= 1
                #expect(throws: MerkleProof.Failure.self) {
                    try MerkleProof.verifyInclusion(
                        leafHash: leaf,
                        index: c.index,
                        size: c.size,
                        proof: [changed] + proof.dropFirst(),
                        root: root
                    )
                }
            }
        }
        for case let c in v.proofs.consistency {
            #expect(tree.consistencyProof(first: c.first, second: c.second)?.map(Self.hex) == c.proof)
            if c.first < c.second {
                #expect(try nodes.consistencyProof(first: c.first, second: c.second).map(Self.hex) == c.proof)
            }
            let proof = c.proof.map(SpecExamples.hex)
            let firstRoot = SpecExamples.hex(v.proofs.roots[Int(c.first) - 1])
            let secondRoot = SpecExamples.hex(v.proofs.roots[Int(c.second) - 1])
            try MerkleProof.verifyConsistency(
                first: c.first,
                second: c.second,
                firstRoot: firstRoot,
                secondRoot: secondRoot,
                proof: proof
            )
            if var changed = proof.last {
                changed[0] ^= 1
                #expect(throws: MerkleProof.Failure.self) {
                    try MerkleProof.verifyConsistency(
                        first: c.first,
                        second: c.second,
                        firstRoot: firstRoot,
                        secondRoot: secondRoot,
                        proof: proof.dropLast() + [changed]
                    )
                }
            }
        }
    }
}

/// Eight lowercase hex digits, as the vectors write key IDs.
enum NoteEncodingHex {
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
