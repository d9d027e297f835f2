import Synchronization
import Testing
import TransparencyLog

/// The stored-node form of the tree gives the same roots and proofs as the RFC's definitions over all leaves.
@Suite("MerkleNodes")
struct MerkleNodesTests {
    struct MissingNode: Error {
        var level: Int
        var index: UInt64
    }

    /// A node store in memory, filled by appends as the collector fills its table.
    final class Store: Sendable {
        let nodes = Mutex<[String: [UInt8]]>([:])
        let reads = Atomic<Int>(0)

        var tree: MerkleNodes {
            MerkleNodes { level, index in
                self.reads.add(1, ordering: .relaxed)
                guard let hash = self.nodes.withLock({ $0["\(level)/\(index)"] }) else {
                    throw MissingNode(level: level, index: index)
                }
                return hash
            }
        }

        func append(_ leafHash: [UInt8], size: UInt64) throws {
            for node in try tree.append(leafHash: leafHash, toSize: size) {
                nodes.withLock { $0["\(node.level)/\(node.index)"] = node.hash }
            }
        }
    }

    @Test("roots, inclusion and consistency proofs of every tree up to 70 leaves equal MerkleTree's")
    func sameAsDefinition() throws {
        let store = Store()
        var reference = MerkleTree()
        for size in UInt64(1)...70 {
            let leaf: [UInt8] = [UInt8(truncatingIfNeeded: size), 0x5a]
            try store.append(MerkleHash.leaf(leaf), size: size - 1)
            reference.append(leaf: leaf)
            #expect(try store.tree.root(size: size) == reference.root(size: size))
            for index in 0..<size {
                #expect(
                    try store.tree.inclusionProof(index: index, size: size)
                        == reference.inclusionProof(index: index, size: size)
                )
            }
            for first in 1..<size {
                #expect(
                    try store.tree.consistencyProof(first: first, second: size)
                        == reference.consistencyProof(first: first, second: size)
                )
            }
        }
        // Roots of earlier sizes stay readable from the same nodes.
        #expect(try store.tree.root(size: 37) == reference.root(size: 37))
        #expect(try store.tree.root(size: 0) == MerkleHash.empty)
    }

    @Test("an append stores the leaf and the nodes it completes: 1, 2, 1, 3 ... nodes; a proof reads O(log n) nodes")
    func appendsAndReads() throws {
        let store = Store()
        var added: [Int] = []
        for size in UInt64(0)..<8 {
            let before = store.nodes.withLock { $0.count }
            try store.append(MerkleHash.leaf([UInt8(size)]), size: size)
            added.append(store.nodes.withLock { $0.count } - before)
        }
        #expect(added == [1, 2, 1, 3, 1, 2, 1, 4])
        for size in UInt64(8)..<1000 {
            try store.append(MerkleHash.leaf([UInt8(truncatingIfNeeded: size)]), size: size)
        }
        store.reads.store(0, ordering: .relaxed)
        _ = try store.tree.inclusionProof(index: 517, size: 1000)
        #expect(store.reads.load(ordering: .relaxed) <= 2 * 10)
    }

    @Test("asking beyond the tree is an error, not a trap")
    func outOfRange() throws {
        let store = Store()
        try store.append(MerkleHash.leaf([1]), size: 0)
        #expect(throws: MerkleNodes.OutOfRange.self) { try store.tree.inclusionProof(index: 1, size: 1) }
        #expect(throws: MerkleNodes.OutOfRange.self) { try store.tree.consistencyProof(first: 0, second: 1) }
        #expect(throws: MerkleNodes.OutOfRange.self) { try store.tree.consistencyProof(first: 2, second: 1) }
        // A size beyond what is stored reads a node that is not there: the store's error.
        #expect(throws: MissingNode.self) { try store.tree.root(size: 2) }
        // The largest sizes compute their paths without overflow and ask the store for nodes it does not have.
        #expect(throws: MissingNode.self) { try store.tree.inclusionProof(index: UInt64.max - 1, size: UInt64.max) }
        #expect(throws: MissingNode.self) { try store.tree.consistencyProof(first: UInt64.max - 1, second: UInt64.max) }
    }
}
