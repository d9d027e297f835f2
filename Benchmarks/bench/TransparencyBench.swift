import Foundation
import TransparencyLog

/// The collector's Merkle tree (docs/TRANSPARENCY.md) measured alone, in memory, through the code the collector
/// runs: `MerkleTiles.append` in batches of 1 000 leaf hashes of entry-sized leaves, and inclusion proofs in a
/// 2^20-leaf tree, each built from a fresh tile reader (as one request would) and verified.
enum TransparencyBench {
    /// Tiles in memory, as the collector's `tree_tiles` table holds them.
    final class Tiles {
        var tiles: [UInt64: [UInt8]] = [:]
        static func key(_ level: Int, _ index: UInt64) -> UInt64 { UInt64(level) << 56 | index }
        var reader: MerkleTiles { MerkleTiles { level, index in self.tiles[Self.key(level, index)] ?? [] } }
    }

    static func run(options: BenchOptions, rates: PrimitiveRates, summary: Summary) throws {
        let leaves = 1 << 20
        let store = Tiles()
        var size: UInt64 = 0
        // Leaves of about an entry's size (a sealed event is 500 to 600 bytes), hashed as the collector hashes them.
        var leaf = [UInt8](repeating: 0x5a, count: 560)
        var leafHashes: [[UInt8]] = []
        leafHashes.reserveCapacity(leaves)
        let seconds = try Timing.measure {
            for start in stride(from: 0, to: leaves, by: 1000) {
                var batch: [[UInt8]] = []
                for index in start..<min(start + 1000, leaves) {
                    leaf[0] = UInt8(truncatingIfNeeded: index)
                    leaf[1] = UInt8(truncatingIfNeeded: index >> 8)
                    leaf[2] = UInt8(truncatingIfNeeded: index >> 16)
                    batch.append(MerkleHash.leaf(leaf))
                }
                for tile in try store.reader.append(leafHashes: batch, toSize: size) {
                    store.tiles[Tiles.key(tile.level, tile.index)] = tile.hashes
                }
                size += UInt64(batch.count)
                leafHashes += batch
            }
        }
        Summary.say(
            "  built a tree of \(Timing.grouped(Double(leaves))) leaves of 560 bytes by MerkleTiles.append in batches "
                + "of 1000 in \(Timing.duration(seconds)): \(Timing.duration(seconds / Double(leaves))) per leaf"
        )
        summary.add(
            Figure(
                name: "tree append per entry (leaf hash + tiles, batches of 1000) vs Ed25519 verify, 1 core",
                value: Double(leaves) / seconds,
                unit: .rate,
                reference: rates.verify,
                referenceName: "verify, 1 core",
                // Under 5 % of an entry's ingest, which its signature check dominates: at least 20 appends per verify.
                target: .ratioAtLeast(20)
            )
        )

        let root = try store.reader.nodes().root(size: size)
        var generator = SystemRandomNumberGenerator()
        let samples = options.quick ? 300 : 2000
        var build: [Double] = []
        var verify: [Double] = []
        var longest = 0
        for _ in 0..<samples {
            let index = UInt64.random(in: 0..<size, using: &generator)
            var proof: [[UInt8]] = []
            build.append(
                try Timing.measure { proof = try store.reader.nodes().inclusionProof(index: index, size: size) }
            )
            longest = max(longest, proof.count)
            verify.append(
                try Timing.measure {
                    try MerkleProof.verifyInclusion(
                        leafHash: leafHashes[Int(index)],
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
        Summary.say(
            "  \(samples) inclusion proofs of random leaves in the \(Timing.grouped(Double(leaves)))-leaf tree: "
                + "at most \(longest) hashes (target ≤ 20); build max \(Timing.duration(build.last ?? 0)), "
                + "verify max \(Timing.duration(verify.last ?? 0))"
        )
        guard longest <= 20 else { throw BenchError("an inclusion proof of \(longest) hashes in a 2^20-leaf tree") }
        for (name, values) in [("build from a fresh tile reader", build), ("verify", verify)] {
            summary.add(
                Figure(
                    name: "inclusion proof in a 1 M-leaf tree, \(name), p99",
                    value: Timing.percentile(values, 0.99),
                    unit: .seconds,
                    target: .valueBelow(0.001)
                )
            )
        }
    }
}
