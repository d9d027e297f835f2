import Testing
import TransparencyLog

/// The tiled form of the tree (c2sp.org/tlog-tiles layout) gives the RFC's roots and proofs, and an append writes
/// only right-edge tiles.
@Suite("MerkleTiles")
struct MerkleTilesTests {
    /// Tiles in memory, keyed "level/index".
    final class Store {
        var tiles: [String: [UInt8]] = [:]
        var size: UInt64 = 0
        /// Tiles read since the last reset.
        var reads = 0

        var reader: MerkleTiles {
            MerkleTiles { level, index in
                self.reads += 1
                return self.tiles["\(level)/\(index)"] ?? []
            }
        }

        /// Appends leaves; returns the tiles written.
        @discardableResult
        func append(_ leafHashes: [[UInt8]]) throws -> [MerkleTiles.Tile] {
            let tiles = reader
            let written = try tiles.append(leafHashes: leafHashes, toSize: size)
            for tile in written { self.tiles["\(tile.level)/\(tile.index)"] = tile.hashes }
            size += UInt64(leafHashes.count)
            return written
        }
    }

    static func leaf(_ index: Int) -> [UInt8] {
        MerkleHash.leaf([UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8), 7])
    }

    @Test("appends in batches of every size give MerkleTree's roots and proofs, across tile levels 0 and 1")
    func sameAsDefinition() throws {
        let store = Store()
        var reference = MerkleTree()
        var next = 0
        for batch in [1, 2, 3, 250, 1, 255, 256, 257, 30, 700, 1] {
            let hashes = (next..<next + batch).map(Self.leaf)
            try store.append(hashes)
            reference = MerkleTree(leafHashes: reference.leafHashes + hashes)
            next += batch
            let tiles = store.reader
            let nodes = tiles.nodes()
            #expect(try nodes.root(size: store.size) == reference.root(size: store.size))
            for index in [0, store.size / 3, store.size / 2, store.size - 1] {
                #expect(
                    try nodes.inclusionProof(index: index, size: store.size)
                        == reference.inclusionProof(index: index, size: store.size)
                )
            }
            if store.size > 1 {
                for first in [1, store.size / 2, store.size - 1] where first > 0 && first < store.size {
                    #expect(
                        try nodes.consistencyProof(first: first, second: store.size)
                            == reference.consistencyProof(first: first, second: store.size)
                    )
                }
            }
        }
        #expect(store.size == 1756)
        // Earlier sizes stay provable from the same tiles.
        let tiles = store.reader
        #expect(try tiles.nodes().root(size: 300) == reference.root(size: 300))
    }

    @Test("a batch writes each level's right-edge tile once; full tiles are written once and never again")
    func writesOnlyTheEdge() throws {
        let store = Store()
        let written = try store.append((0..<1000).map(Self.leaf))
        // Level 0: tiles 0, 1, 2 full and 3 partial (232 hashes); level 1: one partial tile of 3 hashes.
        #expect(
            written.map { "\($0.level)/\($0.index):\($0.width)" } == [
                "0/0:256", "0/1:256", "0/2:256", "0/3:232", "1/0:3",
            ]
        )
        let next = try store.append([Self.leaf(1000)])
        #expect(next.map { "\($0.level)/\($0.index):\($0.width)" } == ["0/3:233"])
    }

    @Test("tile level 2 (over 65 536 leaves): the root equals MerkleTree's")
    func levelTwo() throws {
        let store = Store()
        let hashes = (0..<66_000).map(Self.leaf)
        for start in stride(from: 0, to: hashes.count, by: 5000) {
            try store.append(Array(hashes[start..<min(start + 5000, hashes.count)]))
        }
        #expect(store.tiles["2/0"]?.count == 32)
        let tiles = store.reader
        #expect(try tiles.nodes().root(size: store.size) == MerkleTree(leafHashes: hashes).root())
    }

    @Test("a store that lost a partial tile is an error, not a wrong tree")
    func damagedStore() throws {
        let store = Store()
        try store.append((0..<10).map(Self.leaf))
        store.tiles["0/0"] = Array(store.tiles["0/0"]!.prefix(5 * 32))
        let tiles = store.reader
        #expect(throws: MerkleNodes.OutOfRange.self) { try tiles.append(leafHashes: [Self.leaf(10)], toSize: 10) }
        #expect(throws: MerkleNodes.OutOfRange.self) { try tiles.nodes().root(size: 10) }
    }
}
