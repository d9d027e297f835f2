import Testing
import TransparencyLog

/// Roots and proofs read from stored complete-subtree nodes give the same results as the RFC's definitions over all
/// leaves, read few tiles, and never overflow.
@Suite("MerkleNodes")
struct MerkleNodesTests {
    @Test(
        "roots, inclusion and consistency proofs of every tree up to 70 leaves, grown a leaf at a time, equal MerkleTree's"
    )
    func sameAsDefinition() throws {
        let store = MerkleTilesTests.Store()
        var reference = MerkleTree()
        for size in UInt64(1)...70 {
            let leaf: [UInt8] = [UInt8(truncatingIfNeeded: size), 0x5a]
            try store.append([MerkleHash.leaf(leaf)])
            reference.append(leaf: leaf)
            let nodes = store.reader.nodes()
            #expect(try nodes.root(size: size) == reference.root(size: size))
            for index in 0..<size {
                #expect(
                    try nodes.inclusionProof(index: index, size: size)
                        == reference.inclusionProof(index: index, size: size)
                )
            }
            for first in 1..<size {
                #expect(
                    try nodes.consistencyProof(first: first, second: size)
                        == reference.consistencyProof(first: first, second: size)
                )
            }
        }
        // Roots of earlier sizes stay readable from the same tiles.
        #expect(try store.reader.nodes().root(size: 37) == reference.root(size: 37))
        #expect(try store.reader.nodes().root(size: 0) == MerkleHash.empty)
    }

    @Test("a proof in a tree of 70 000 leaves reads a handful of tiles, not the tree")
    func fewReads() throws {
        let store = MerkleTilesTests.Store()
        for start in stride(from: 0, to: 70_000, by: 10_000) {
            try store.append((start..<start + 10_000).map(MerkleTilesTests.leaf))
        }
        store.reads = 0
        _ = try store.reader.nodes().inclusionProof(index: 51_717, size: 70_000)
        // Tile levels 0, 1 and 2, with the partial right edges: at most two tiles per level.
        #expect(store.reads <= 6)
    }

    struct MissingNode: Error {
        var level: Int
        var index: UInt64
    }

    @Test("asking beyond the tree is an error, not a trap")
    func outOfRange() throws {
        let nodes = MerkleNodes { level, index in throw MissingNode(level: level, index: index) }
        #expect(throws: MerkleNodes.OutOfRange.self) { try nodes.inclusionProof(index: 1, size: 1) }
        #expect(throws: MerkleNodes.OutOfRange.self) { try nodes.consistencyProof(first: 0, second: 1) }
        #expect(throws: MerkleNodes.OutOfRange.self) { try nodes.consistencyProof(first: 2, second: 1) }
        // The largest sizes compute their paths without overflow and ask the reader for nodes it does not have.
        #expect(throws: MissingNode.self) { try nodes.inclusionProof(index: UInt64.max - 1, size: UInt64.max) }
        #expect(throws: MissingNode.self) { try nodes.consistencyProof(first: UInt64.max - 1, second: UInt64.max) }
        #expect(throws: MissingNode.self) { try nodes.root(size: 2) }
    }
}
