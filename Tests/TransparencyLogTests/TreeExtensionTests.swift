import Testing
import TransparencyLog

@Suite struct TreeExtensionTests {
    static let tree = MerkleTree(leaves: (0..<20).map { [UInt8($0)] })
    static let other = MerkleTree(leaves: (0..<20).map { [UInt8($0 + 100)] })

    static func head(_ tree: MerkleTree, _ size: UInt64) -> TreeExtension.Head {
        TreeExtension.Head(size: size, rootHash: tree.root(size: size) ?? [])
    }

    @Test("a larger tree with its consistency proof extends the older one, for every pair of sizes up to 20")
    func extends() throws {
        for second in UInt64(1)...20 {
            for first in UInt64(1)..<second {
                let proof = try #require(Self.tree.consistencyProof(first: first, second: second))
                #expect(
                    TreeExtension.check(
                        from: Self.head(Self.tree, first),
                        to: Self.head(Self.tree, second),
                        proof: proof
                    )
                        == .extends
                )
            }
        }
    }

    @Test("the same tree extends itself with no proof or an empty one, and a smaller tree never extends")
    func sameAndSmaller() {
        let head = Self.head(Self.tree, 7)
        #expect(TreeExtension.check(from: head, to: head, proof: nil) == .extends)
        #expect(TreeExtension.check(from: head, to: head, proof: []) == .extends)
        #expect(TreeExtension.check(from: head, to: Self.head(Self.tree, 6), proof: nil) == .shrank)
        #expect(TreeExtension.check(from: head, to: Self.head(Self.tree, 6), proof: []) == .shrank)
    }

    @Test(
        "equal sizes with other roots are a fork, before any proof is looked at; a proof between equal trees is refused"
    )
    func forkAndNeedlessProof() {
        let mine = Self.head(Self.tree, 9)
        let theirs = Self.head(Self.other, 9)
        #expect(TreeExtension.check(from: mine, to: theirs, proof: nil) == .forked)
        #expect(TreeExtension.check(from: mine, to: theirs, proof: [[UInt8](repeating: 0, count: 32)]) == .forked)
        #expect(TreeExtension.check(from: mine, to: mine, proof: [mine.rootHash]) == .proofAtEqualSize)
    }

    @Test("every tree extends the empty tree, with no proof; a proof from the empty tree is refused")
    func emptyTree() {
        let empty = Self.head(Self.tree, 0)
        #expect(TreeExtension.check(from: empty, to: Self.head(Self.tree, 5), proof: nil) == .extends)
        #expect(TreeExtension.check(from: empty, to: Self.head(Self.other, 5), proof: []) == .extends)
        #expect(
            TreeExtension.check(from: empty, to: Self.head(Self.tree, 5), proof: [empty.rootHash])
                == .proofFromEmptyTree
        )
    }

    @Test("a missing, short, forged or hostile proof, or another history, is not proof of extension")
    func notProved() throws {
        let old = Self.head(Self.tree, 6)
        let new = Self.head(Self.tree, 13)
        let proof = try #require(Self.tree.consistencyProof(first: 6, second: 13))
        #expect(TreeExtension.check(from: old, to: new, proof: nil) == .missingProof)
        #expect(TreeExtension.check(from: old, to: new, proof: Array(proof.dropLast())) == .notProved(.proofLength))
        var forged = proof
        forged[0][0] ^= 1
        #expect(TreeExtension.check(from: old, to: new, proof: forged) == .notProved(.rootMismatch))
        #expect(TreeExtension.check(from: old, to: new, proof: [[1, 2, 3]]) == .notProved(.badHash))
        #expect(
            TreeExtension.check(from: Self.head(Self.other, 6), to: new, proof: proof) == .notProved(.rootMismatch)
        )
        let huge = TreeExtension.Head(size: .max, rootHash: new.rootHash)
        if case .notProved = TreeExtension.check(from: old, to: huge, proof: proof) {
        } else {
            Issue.record("a tree of 2^64 - 1 leaves was taken as proved")
        }
    }

    @Test("a checkpoint's head is its size and root")
    func checkpointHead() throws {
        let checkpoint = try Checkpoint(origin: "example.com/log", size: 3, rootHash: Self.tree.root(size: 3) ?? [])
        #expect(checkpoint.head == Self.head(Self.tree, 3))
    }
}
