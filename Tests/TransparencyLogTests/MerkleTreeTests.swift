import Testing
import TransparencyLog

/// Proofs of every index and every pair of sizes of small trees, built by the RFC's definitions and checked by the
/// RFC's verification algorithms; any change to a proof, a root, an index or a size is refused.
@Suite("MerkleTree")
struct MerkleTreeTests {
    static let tree = MerkleTree(leaves: (0..<40).map { [UInt8(truncatingIfNeeded: $0), 0xa5] })

    @Test("every inclusion proof of every tree up to 40 leaves verifies, with the RFC's length, and a flip fails")
    func inclusion() throws {
        for size in UInt64(1)...Self.tree.size {
            let root = try #require(Self.tree.root(size: size))
            for index in 0..<size {
                let proof = try #require(Self.tree.inclusionProof(index: index, size: size))
                let leaf = Self.tree.leafHashes[Int(index)]
                #expect(proof.count == MerkleProof.inclusionLength(index: index, size: size))
                #expect(throws: Never.self) {
                    try MerkleProof.verifyInclusion(leafHash: leaf, index: index, size: size, proof: proof, root: root)
                }
                if let first = proof.first {
                    var flipped = proof
                    flipped[0] = [first[0] ^ 1] + first.dropFirst()
                    #expect(throws: MerkleProof.Failure.rootMismatch) {
                        try MerkleProof.verifyInclusion(
                            leafHash: leaf,
                            index: index,
                            size: size,
                            proof: flipped,
                            root: root
                        )
                    }
                }
                if size > 1 {
                    let other = (index + 1) % size
                    #expect(throws: MerkleProof.Failure.self) {
                        try MerkleProof.verifyInclusion(
                            leafHash: leaf,
                            index: other,
                            size: size,
                            proof: proof,
                            root: root
                        )
                    }
                }
            }
        }
    }

    @Test(
        "every consistency proof between sizes up to 40 verifies (none from the empty tree); another root or a shorter proof fails"
    )
    func consistency() throws {
        for second in UInt64(1)...Self.tree.size {
            let secondRoot = try #require(Self.tree.root(size: second))
            for first in 0...second {
                let firstRoot = try #require(Self.tree.root(size: first))
                let proof = try #require(Self.tree.consistencyProof(first: first, second: second))
                guard first > 0 else {
                    #expect(throws: MerkleProof.Failure.emptyFirstTree) {
                        try MerkleProof.verifyConsistency(
                            first: first,
                            second: second,
                            firstRoot: firstRoot,
                            secondRoot: secondRoot,
                            proof: proof
                        )
                    }
                    continue
                }
                #expect(throws: Never.self) {
                    try MerkleProof.verifyConsistency(
                        first: first,
                        second: second,
                        firstRoot: firstRoot,
                        secondRoot: secondRoot,
                        proof: proof
                    )
                }
                guard first > 0, first < second else { continue }
                let forged = MerkleHash.leaf([0xff])
                #expect(throws: MerkleProof.Failure.self) {
                    try MerkleProof.verifyConsistency(
                        first: first,
                        second: second,
                        firstRoot: forged,
                        secondRoot: secondRoot,
                        proof: proof
                    )
                }
                #expect(throws: MerkleProof.Failure.self) {
                    try MerkleProof.verifyConsistency(
                        first: first,
                        second: second,
                        firstRoot: firstRoot,
                        secondRoot: secondRoot,
                        proof: Array(proof.dropLast())
                    )
                }
            }
        }
    }

    @Test("hostile sizes and indexes are refused, never trap")
    func hostile() {
        let hash = MerkleHash.leaf([1])
        for (index, size) in [(UInt64.max, UInt64.max), (0, 0), (UInt64.max - 1, UInt64.max), (5, 3)] {
            #expect(throws: MerkleProof.Failure.self) {
                try MerkleProof.verifyInclusion(
                    leafHash: hash,
                    index: index,
                    size: size,
                    proof: Array(repeating: hash, count: 64),
                    root: hash
                )
            }
        }
        for (first, second) in [(UInt64.max, UInt64.max - 1), (1, UInt64.max), (UInt64.max - 1, UInt64.max)] {
            #expect(throws: MerkleProof.Failure.self) {
                try MerkleProof.verifyConsistency(
                    first: first,
                    second: second,
                    firstRoot: hash,
                    secondRoot: hash,
                    proof: Array(repeating: hash, count: 70)
                )
            }
        }
        #expect(throws: MerkleProof.Failure.badHash) {
            try MerkleProof.verifyInclusion(leafHash: [1, 2], index: 0, size: 1, proof: [], root: hash)
        }
        #expect(MerkleTree().root() == MerkleHash.empty)
        #expect(Self.tree.inclusionProof(index: 3, size: 41) == nil)
        #expect(Self.tree.consistencyProof(first: 5, second: 4) == nil)
    }
}
