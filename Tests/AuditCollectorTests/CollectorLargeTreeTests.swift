import AuditChain
import AuditCollector
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// Trees of more than 65 536 leaves through the read API: three tile levels, the spec's own example of which tiles
/// a tree of 70 000 leaves has, and tile indexes past 999 (`x001/000`) at 256 300 leaves. Sealing and ingesting
/// 70 000 entries would take about a minute here, so the log's
/// rows are written straight into the database (leaves of synthetic bytes, their tiles grown by `MerkleTiles`, with
/// a gap and an entry inside it that is not a leaf), and the collector builds its leaf index when it opens it.
@Suite struct CollectorLargeTreeTests {
    /// Synthetic leaf `i`, at seq `i` below 1 000 and `i + 5` from there: seqs 1 000 ... 1 004 are a gap.
    static func seq(_ leaf: Int) -> Int { leaf < 1000 ? leaf : leaf + 5 }
    static func leaf(_ index: Int) -> [UInt8] { Array("synthetic leaf \(index)".utf8) }

    /// Writes the log: its entries (and one more at seq 1 002, not a leaf), its tiles and its tree row.
    static func writeLog(_ path: String, logId: [UInt8], leaves: [[UInt8]]) async throws {
        var tiles: [String: MerkleTiles.Tile] = [:]
        let reader = MerkleTiles { level, index in tiles["\(level)/\(index)"]?.hashes ?? [] }
        var size: UInt64 = 0
        for start in stride(from: 0, to: leaves.count, by: 4096) {
            let chunk = leaves[start..<min(start + 4096, leaves.count)].map { MerkleHash.leaf($0) }
            for tile in try reader.append(leafHashes: chunk, toSize: size) {
                tiles["\(tile.level)/\(tile.index)"] = tile
            }
            size += UInt64(chunk.count)
        }
        let queue = try DatabaseQueue(path: path)
        try await queue.write { [tiles] db in
            let insert = try db.makeStatement(
                sql: """
                    INSERT INTO entries (logId, seq, kind, entryHash, prevHash, bytes, receivedAt)
                    VALUES (?, ?, 0, ?, ?, ?, 0)
                    """
            )
            let zero = Data(count: 32)
            for (index, leaf) in leaves.enumerated() {
                try insert.execute(arguments: [Data(logId), Self.seq(index), zero, zero, Data(leaf)])
            }
            try insert.execute(arguments: [Data(logId), 1002, zero, zero, Data("not a leaf".utf8)])
            for tile in tiles.values {
                try db.execute(
                    sql: "INSERT INTO tree_tiles (logId, level, idx, hashes) VALUES (?, ?, ?, ?)",
                    arguments: [Data(logId), tile.level, Int64(tile.index), Data(tile.hashes)]
                )
            }
            try db.execute(
                sql: "INSERT INTO trees (logId, size, coveredSeq) VALUES (?, ?, ?)",
                arguments: [Data(logId), leaves.count, Self.seq(leaves.count - 1)]
            )
        }
    }

    /// For each size: tiles that exist (their paths), and tiles and bundles that do not.
    static let expected: [Int: (present: [String], absent: [String])] = [
        // c2sp.org/tlog-tiles, "Partial Tiles": 273 full level 0 tiles, one of width 112, one full level 1 tile, one
        // of width 17, one level 2 tile of width 1.
        70_000: (
            ["tile/0/272", "tile/0/273.p/112", "tile/1/000", "tile/1/001.p/17", "tile/2/000.p/1", "tile/entries/272"],
            [
                "tile/0/273", "tile/0/273.p/113", "tile/0/274.p/1", "tile/1/001", "tile/1/001.p/18", "tile/2/000",
                "tile/2/000.p/2", "tile/3/000.p/1", "tile/entries/273", "tile/entries/274.p/1",
            ]
        ),
        // 1 001 full level 0 tiles and one of 44; 1 001 level 1 hashes: three full tiles and one of 233; 3 at level 2.
        256_300: (
            [
                "tile/0/x001/000", "tile/0/x001/001.p/44", "tile/1/002", "tile/1/003.p/233", "tile/2/000.p/3",
                "tile/entries/x001/000", "tile/entries/x001/001.p/44",
            ],
            ["tile/0/x001/001", "tile/0/x001/002.p/1", "tile/1/003", "tile/2/000.p/4", "tile/entries/x001/001"]
        ),
    ]

    @Test(
        "more than 65 536 leaves: exactly the tiles the tree has are served, and they give the checkpoint's root",
        arguments: [70_000, 256_300]
    )
    func largeTrees(size: Int) async throws {
        let directory = CollectorTempDir()
        let logId = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let leaves = (0..<size).map(Self.leaf)
        try await withCollector(directory) { _, _ in }  // creates the database
        try await Self.writeLog(directory.database, logId: logId, leaves: leaves)
        let reference = MerkleTree(leaves: leaves)
        try await withCollector(directory) { client, collector in
            let reader = TreeReader(client: client, logId: logId)
            let (checkpoint, key) = try await reader.checkpoint()
            #expect(checkpoint.size == UInt64(size))
            #expect(checkpoint.rootHash == reference.root())
            #expect(try await reader.root(size: checkpoint.size) == checkpoint.rootHash)

            let (present, absent) = try #require(Self.expected[size])
            for path in present {
                #expect(try await reader.get(try TilePath(parsing: path)).status == 200, "\(path)")
            }
            for path in absent {
                #expect(try await reader.get(try TilePath(parsing: path)).status == 404, "\(path)")
            }
            let last = (size - 1) / 256
            let lastPath = try TilePath(kind: .entries, index: UInt64(last), partialWidth: size % 256)
            #expect(try EntryBundle.parse(try await reader.get(lastPath).body) == Array(leaves[last * 256..<size]))
            let full = try TilePath(kind: .entries, index: UInt64(last - 1))
            #expect(
                try EntryBundle.parse(try await reader.get(full).body) == Array(leaves[(last - 1) * 256..<last * 256])
            )
            let gap = try await reader.get(try TilePath(parsing: "tile/entries/003"))
            #expect(try EntryBundle.parse(gap.body) == Array(leaves[768..<1024]))

            // Proofs by seq across the gap, verified against the checkpoint each answer carries.
            for leaf in [0, 999, 1000, 65_535, 65_536, size - 1] {
                let reply = try await client.send("GET", reader.prefix + "proof?seq=\(Self.seq(leaf))")
                let answer = try InclusionAnswer(reply.json)
                #expect(answer.leafIndex == UInt64(leaf) && answer.seq == UInt64(Self.seq(leaf)))
                #expect(answer.entry == leaves[leaf] && answer.treeSize == UInt64(size))
                try answer.verify(key: key)
            }
            let nonleaf = try await client.send("GET", reader.prefix + "proof?seq=1002")
            #expect(nonleaf.status == 404 && nonleaf.json?.objectValue?["reason"] == "notALeaf")
            #expect(try await collector.store.leafIndex(logId: logId, seq: 1005) == 1000)
        }
    }
}
