import Foundation
import Synchronization
import TransparencyLog

/// The collector's Merkle tree (docs/TRANSPARENCY.md), measured on its own while the collector does not keep one
/// yet: appends to the stored-node form (`MerkleNodes`, what the collector will store in its ingest
/// transaction), and inclusion proofs in a 1 M-leaf tree, built and verified one by one.
enum TransparencyBench {
    /// The stored nodes, one array per level, in memory.
    final class Levels: Sendable {
        let levels = Mutex<[[[UInt8]]]>([])

        var tree: MerkleNodes {
            MerkleNodes { level, index in
                try self.levels.withLock { levels in
                    guard level < levels.count, index < UInt64(levels[level].count) else {
                        throw BenchError("no stored node \(level)/\(index)")
                    }
                    return levels[level][Int(index)]
                }
            }
        }

        func store(_ nodes: [(level: Int, index: UInt64, hash: [UInt8])]) {
            levels.withLock { levels in
                for node in nodes {
                    while levels.count <= node.level { levels.append([]) }
                    levels[node.level].append(node.hash)
                }
            }
        }
    }

    /// Tiles in memory, as the collector's `tree_tiles` table holds them.
    final class Tiles {
        var tiles: [UInt64: [UInt8]] = [:]
        static func key(_ level: Int, _ index: UInt64) -> UInt64 { UInt64(level) << 56 | index }
        var reader: MerkleTiles { MerkleTiles { level, index in self.tiles[Self.key(level, index)] ?? [] } }
    }

    /// The collector's form: tiles written once per batch of 1 000 entries, and each proof built from a fresh
    /// reader (as one request would), hashing the levels between the stored ones.
    static func tiled(leafHashes: [[UInt8]], rates: PrimitiveRates, samples: Int, summary: Summary) throws {
        let store = Tiles()
        var size: UInt64 = 0
        let seconds = try Timing.measure {
            for start in stride(from: 0, to: leafHashes.count, by: 1000) {
                let batch = Array(leafHashes[start..<min(start + 1000, leafHashes.count)])
                var reader = store.reader
                for tile in try reader.append(leafHashes: batch, toSize: size) {
                    store.tiles[Tiles.key(tile.level, tile.index)] = tile.hashes
                }
                size += UInt64(batch.count)
            }
        }
        summary.add(
            Figure(
                name: "tiles: append per entry, batches of 1000 (leaf hash excluded) vs Ed25519 verify, 1 core",
                value: Double(leafHashes.count) / seconds,
                unit: .rate,
                reference: rates.verify,
                referenceName: "verify, 1 core",
                target: .ratioAtLeast(20)
            )
        )
        var reader = store.reader
        let root = try reader.nodes().root(size: size)
        var generator = SystemRandomNumberGenerator()
        var build: [Double] = []
        for _ in 0..<samples {
            let index = UInt64.random(in: 0..<size, using: &generator)
            var proof: [[UInt8]] = []
            build.append(
                try Timing.measure {
                    var fresh = store.reader
                    proof = try fresh.nodes().inclusionProof(index: index, size: size)
                }
            )
            try MerkleProof.verifyInclusion(
                leafHash: leafHashes[Int(index)],
                index: index,
                size: size,
                proof: proof,
                root: root
            )
        }
        build.sort()
        summary.add(
            Figure(
                name: "tiles: inclusion proof in a 1 M-leaf tree from a fresh reader, build, p99",
                value: Timing.percentile(build, 0.99),
                unit: .seconds,
                target: .valueBelow(0.001)
            )
        )
    }

    static func run(options: BenchOptions, rates: PrimitiveRates, summary: Summary) throws {
        let leaves = 1 << 20
        let store = Levels()
        let tree = store.tree
        // Leaves of about an entry's size (a sealed event is 500 to 600 bytes).
        var leaf = [UInt8](repeating: 0x5a, count: 560)
        var hashing = 0.0
        let seconds = try Timing.measure {
            for index in 0..<leaves {
                leaf[0] = UInt8(truncatingIfNeeded: index)
                leaf[1] = UInt8(truncatingIfNeeded: index >> 8)
                leaf[2] = UInt8(truncatingIfNeeded: index >> 16)
                let started = ContinuousClock.now
                let hash = MerkleHash.leaf(leaf)
                hashing += Timing.seconds(ContinuousClock.now - started)
                store.store(try tree.append(leafHash: hash, toSize: UInt64(index)))
            }
        }
        let perLeaf = seconds / Double(leaves)
        Summary.say(
            "  built a tree of \(Timing.grouped(Double(leaves))) leaves of 560 bytes by MerkleNodes.append in "
                + "\(Timing.duration(seconds)) (leaf hashing \(Timing.duration(hashing))): "
                + "\(Timing.duration(perLeaf)) per leaf"
        )
        summary.add(
            Figure(
                name: "tree append per entry (leaf hash + completed nodes) vs Ed25519 verify, 1 core",
                value: 1 / perLeaf,
                unit: .rate,
                reference: rates.verify,
                referenceName: "verify, 1 core",
                // Under 5 % of an entry's ingest, which its signature check dominates: at least 20 appends per verify.
                target: .ratioAtLeast(20)
            )
        )

        let size = UInt64(leaves)
        let root = try tree.root(size: size)
        var generator = SystemRandomNumberGenerator()
        let samples = options.quick ? 300 : 2000
        var build: [Double] = []
        var verify: [Double] = []
        var longest = 0
        for _ in 0..<samples {
            let index = UInt64.random(in: 0..<size, using: &generator)
            var proof: [[UInt8]] = []
            build.append(try Timing.measure { proof = try tree.inclusionProof(index: index, size: size) })
            longest = max(longest, proof.count)
            let leafHash = store.levels.withLock { $0[0][Int(index)] }
            verify.append(
                try Timing.measure {
                    try MerkleProof.verifyInclusion(
                        leafHash: leafHash,
                        index: index,
                        size: size,
                        proof: proof,
                        root: root
                    )
                }
            )
        }
        build.sort()
        verify.sort()
        let leafHashes = store.levels.withLock { $0[0] }
        Summary.say(
            "  \(samples) inclusion proofs of random leaves in the \(Timing.grouped(Double(leaves)))-leaf tree: "
                + "at most \(longest) hashes (target ≤ 20); build max \(Timing.duration(build.last ?? 0)), "
                + "verify max \(Timing.duration(verify.last ?? 0))"
        )
        guard longest <= 20 else { throw BenchError("an inclusion proof of \(longest) hashes in a 2^20-leaf tree") }
        for (name, values) in [("build", build), ("verify", verify)] {
            summary.add(
                Figure(
                    name: "inclusion proof in a 1 M-leaf tree, \(name), p99",
                    value: Timing.percentile(values, 0.99),
                    unit: .seconds,
                    target: .valueBelow(0.001)
                )
            )
        }
        try tiled(leafHashes: leafHashes, rates: rates, samples: samples, summary: summary)
    }
}
