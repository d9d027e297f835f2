import AuditChain
import AuditCollector
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// The tlog-tiles read API (docs/COLLECTOR-API.md section 2): tiles and entry bundles under
/// `/v1/logs/{logId}/tile/`, as a tiles client reads them.
@Suite struct CollectorTilesTests {
    static func path(_ text: String) throws -> TilePath { try TilePath(parsing: text) }

    @Test(
        "tiles fetched over HTTP give the checkpoint's root, and the entry bundles hold exactly the leaves",
        arguments: CollectorEngine.underTest
    )
    func tilesRebuildTheCheckpointRoot(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(599)  // 0 ... 599
        try await withCollector(directory) { client, _ in
            let reader = TreeReader(client: client, logId: chain.logId)
            for through in [0, 255, 299, 511, 599] {
                let head = try await client.head(chain.logId).json?.objectValue?["seq"]?.integerValue
                let from = head.map { Int($0) + 1 } ?? 0
                _ = try #require(try await client.post(chain.batch(Array(from...through))).response)
                let (checkpoint, _) = try await reader.checkpoint()
                #expect(checkpoint.size == UInt64(through + 1))
                #expect(try await reader.root(size: checkpoint.size) == checkpoint.rootHash, "size \(checkpoint.size)")
                #expect(checkpoint.rootHash == MerkleTree(leaves: chain.serialized(0...through)).root())
                #expect(try await reader.leaves(size: checkpoint.size) == chain.serialized(0...through))
            }
        }
    }

    @Test(
        "a partial tile asked for after the tree grew is cut from the grown tile; beyond the tree is 404",
        arguments: CollectorEngine.underTest
    )
    func partialTilesAfterGrowth(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(599)
        try await withCollector(directory) { client, _ in
            let reader = TreeReader(client: client, logId: chain.logId)
            _ = try #require(try await client.post(chain.batch(Array(0..<300))).response)
            // At 300 leaves: 256 + 44 at level 0, 1 at level 1.
            let partial = try await reader.get(try Self.path("tile/0/001.p/44"))
            let partialBundle = try await reader.get(try Self.path("tile/entries/001.p/44"))
            #expect(partial.status == 200 && partial.body.count == 44 * 32)
            #expect(try EntryBundle.parse(partialBundle.body) == chain.serialized(256..<300))
            let beyondTree = [
                "tile/0/001", "tile/0/001.p/45", "tile/0/002.p/1", "tile/1/000", "tile/1/000.p/2", "tile/2/000.p/1",
                "tile/entries/001", "tile/entries/001.p/45", "tile/0/x001/000", "tile/63/000.p/1",
                "tile/entries/x018/x446/x744/x073/x709/x551/615",
            ]
            for beyond in beyondTree {
                let reply = try await reader.get(try Self.path(beyond))
                #expect(reply.status == 404, "\(beyond)")
                #expect(reply.json?.objectValue?["reason"] == "beyondTree", "\(beyond)")
                #expect(reply.headers["cache-control"] == "no-store", "\(beyond)")
            }

            _ = try #require(try await client.post(chain.batch(Array(300...599))).response)
            // At 600 leaves tile 0/1 is full: the partial one is still served, the same bytes, a prefix of the full.
            let again = try await reader.get(try Self.path("tile/0/001.p/44"))
            let full = try await reader.get(try Self.path("tile/0/001"))
            #expect(again.status == 200 && again.body == partial.body)
            #expect(full.status == 200 && full.body.count == 8192 && Array(full.body.prefix(44 * 32)) == partial.body)
            let wider = try await reader.get(try Self.path("tile/0/001.p/255"))
            #expect(wider.body == Array(full.body.prefix(255 * 32)))
            #expect(try await reader.get(try Self.path("tile/entries/001.p/44")).body == partialBundle.body)
            #expect(
                try EntryBundle.parse(try await reader.get(try Self.path("tile/entries/001")).body)
                    == chain.serialized(256..<512)
            )
            #expect(try await reader.get(try Self.path("tile/1/000.p/2")).body.count == 64)
            #expect(try await reader.get(try Self.path("tile/0/002.p/88")).status == 200)
            for beyond in ["tile/0/002.p/89", "tile/0/002", "tile/1/000.p/3", "tile/entries/002.p/89"] {
                #expect(try await reader.get(try Self.path(beyond)).status == 404, "\(beyond)")
            }
            // A level 1 hash is the root of the full level 0 tile below it.
            let level1 = try await reader.get(try Self.path("tile/1/000.p/2"))
            #expect(Array(level1.body[32..<64]) == MerkleTree(leafHashes: Self.hashes(full.body)).root())
        }
    }

    static func hashes(_ tile: [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: tile.count, by: 32).map { Array(tile[$0..<$0 + 32]) }
    }

    @Test("tiles and bundles are immutable (public with no token, private behind one); errors and checkpoint are not")
    func cachingHeaders() async throws {
        var chain = CollectorChain()
        chain.appendEvents(9)
        for token in [nil, "secret"] as [String?] {
            let directory = CollectorTempDir()
            try await withCollector(directory, token: token) { client, _ in
                _ = try #require(try await client.post(chain.batch()).response)
                let reader = TreeReader(client: client, logId: chain.logId)
                let visibility = token == nil ? "public" : "private"
                for path in ["tile/0/000.p/10", "tile/entries/000.p/10"] {
                    let reply = try await reader.get(try Self.path(path))
                    #expect(reply.status == 200)
                    #expect(reply.headers["content-type"] == "application/octet-stream")
                    #expect(reply.headers["cache-control"] == "\(visibility), max-age=31536000, immutable", "\(path)")
                }
                let checkpoint = try await client.send("GET", reader.prefix + "checkpoint")
                #expect(checkpoint.headers["cache-control"] == "no-store")
                #expect(checkpoint.headers["content-type"] == "text/plain; charset=utf-8")
                let other = "/v1/logs/\(Hex.encode([UInt8](repeating: 7, count: 16)))/checkpoint"
                #expect(try await client.send("GET", other).headers["cache-control"] == "no-store")
                let missing = try await reader.get(try Self.path("tile/0/000.p/11"))
                #expect(missing.status == 404 && missing.headers["cache-control"] == "no-store")
                #expect(missing.headers["content-type"] == "application/json")
            }
        }
    }

    @Test("malformed tile paths and log ids get 400 with a JSON error", arguments: CollectorEngine.underTest)
    func malformedPathsGet400(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(3)
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch()).response)
            let log = "/v1/logs/\(Hex.encode(chain.logId))/"
            let paths = [
                "tile/0/0", "tile/0/00", "tile/0/0000", "tile/00/000", "tile/01/000", "tile/64/000", "tile/-1/000",
                "tile/a/000", "tile/0/x000/000", "tile/0/x001", "tile/0/001/000", "tile/0/X001/000",
                "tile/0/000.p/0", "tile/0/000.p/256", "tile/0/000.p/01", "tile/0/000.p", "tile/0/000.p/1/2",
                "tile/0//000", "tile/0/000/", "tile/entries/0", "tile/entries/000.p/999",
                "tile/0/x018/x446/x744/x073/x709/x551/616", "tile/0/x001/x000/x000/x000/x000/x000/x000/000",
                "tile/0/%30%30%30", "tile/0/000.p/%31", "tile/data/000", "tile/entries", "tile/0", "tile", "tile/",
            ]
            for path in paths {
                let reply = try await client.send("GET", log + path)
                #expect(reply.status == 400, "\(path): \(reply.status)")
                #expect(reply.error?.isEmpty == false, "\(path)")
            }
            for path in ["/v1/logs/abcd/tile/0/000", "/v1/logs/\(Hex.encode(chain.logId))00/tile/0/000"] {
                #expect(try await client.send("GET", path).status == 400, "\(path)")
            }
            // The same tile, well formed, is there.
            #expect(try await client.send("GET", log + "tile/0/000.p/4").status == 200)
        }
    }

    @Test(
        "a bundle holding an entry longer than 65 535 bytes is refused with 501 naming it; the proof serves it",
        arguments: CollectorEngine.underTest
    )
    func oversizedEntryBundleIsRefused(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(2)  // 1, 2
        var big = CollectorChain.event(3)
        big.attributes["note"] = .string(String(repeating: "a", count: 70_000))
        let entry = try chain.sealer.seal(big, time: chain.tick(), nonce: [UInt8](repeating: 1, count: 12))
        chain.entries.append(entry)  // 3
        chain.appendEvents(1)  // 4
        #expect(entry.serialized.count > EntryBundle.maxEntryLength)
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch()).response)
            let reader = TreeReader(client: client, logId: chain.logId)
            let (checkpoint, _) = try await reader.checkpoint()
            #expect(checkpoint.size == 5)
            let refused = try await reader.get(try Self.path("tile/entries/000.p/5"))
            #expect(refused.status == 501)
            #expect(refused.json?.objectValue?["reason"] == "entryTooLarge")
            #expect(refused.error?.contains("seq 3") == true)
            #expect(refused.error?.contains("proof?seq=3") == true)
            // A bundle that stops before it is served; the tiles are whole.
            let before = try await reader.get(try Self.path("tile/entries/000.p/3"))
            #expect(try EntryBundle.parse(before.body) == chain.serialized(0..<3))
            #expect(try await reader.root(size: 5) == checkpoint.rootHash)
            let proof = try await client.send("GET", reader.prefix + "proof?seq=3")
            #expect(proof.json?.objectValue?["entry"]?.stringValue == Data(entry.serialized).base64EncodedString())
        }
    }
}
