import AuditChain
import AuditCollector
import Crypto
import Foundation
import Testing
import TestKit
import TransparencyLog

/// A client of a collector's read API as a tlog-tiles client would be one: it fetches the checkpoint and the tiles a
/// tree size needs, and computes roots with the pure `MerkleTiles` reading only what it fetched.
struct TreeReader {
    let client: CollectorClient
    let logId: [UInt8]

    var prefix: String { "/v1/logs/\(Hex.encode(logId))/" }

    /// The log's checkpoint, verified with the collector's key under the log's origin.
    func checkpoint(name: String = Collector.defaultName) async throws -> (Checkpoint, NoteVerifierKey) {
        let key = try NoteVerifierKey(name: name + "/" + Hex.encode(logId), publicKey: try await client.collectorKey())
        let reply = try await client.send("GET", prefix + "checkpoint")
        try #require(reply.status == 200, "checkpoint: \(reply.status) \(reply.error ?? "")")
        let note = try SignedNote(parsing: reply.body)
        return (try Checkpoint(signedNote: note, origin: key.name, keys: [key]), key)
    }

    /// GET `prefix + path`.
    func get(_ path: TilePath) async throws -> CollectorReply {
        try await client.send("GET", prefix + path.path)
    }

    /// The tiles the root of a tree of `size` leaves reads (found by a dry run over zero hashes of each tile's width
    /// in that tree), fetched at that width.
    func tiles(forRootOf size: UInt64) async throws -> [String: [UInt8]] {
        let wanted = Wanted()
        _ = try MerkleTiles { level, index in
            let width = MerkleTiles.tileWidth(level: level, index: index, size: size)
            wanted.paths.insert(
                try TilePath(kind: .hashes(level: level), index: index, partialWidth: width < 256 ? width : nil)
            )
            return [UInt8](repeating: 0, count: width * MerkleHash.size)
        }.nodes().root(size: size)
        var fetched: [String: [UInt8]] = [:]
        for path in wanted.paths {
            let reply = try await get(path)
            try #require(reply.status == 200, "\(path): \(reply.status) \(reply.error ?? "")")
            #expect(reply.body.count == path.width * MerkleHash.size, "\(path)")
            guard case .hashes(let level) = path.kind else { continue }
            fetched["\(level)/\(path.index)"] = reply.body
        }
        return fetched
    }

    /// The root of a tree of `size` leaves computed from fetched tiles only.
    func root(size: UInt64) async throws -> [UInt8] {
        let tiles = try await tiles(forRootOf: size)
        return try MerkleTiles { level, index in tiles["\(level)/\(index)"] ?? [] }.nodes().root(size: size)
    }

    /// Every entry of a tree of `size` leaves from its entry bundles, each bundle checked against the level 0 tile of
    /// the same index and width: its entries hash to that tile's leaf hashes, in order.
    func leaves(size: UInt64) async throws -> [[UInt8]] {
        var leaves: [[UInt8]] = []
        var index: UInt64 = 0
        while true {
            let width = MerkleTiles.tileWidth(level: 0, index: index, size: size)
            guard width > 0 else { break }
            let partial = width < 256 ? width : nil
            let bundle = try await get(try TilePath(kind: .entries, index: index, partialWidth: partial))
            let tile = try await get(try TilePath(kind: .hashes(level: 0), index: index, partialWidth: partial))
            try #require(bundle.status == 200 && tile.status == 200, "bundle \(index): \(bundle.status) \(tile.status)")
            let entries = try EntryBundle.parse(bundle.body)
            #expect(entries.count == width)
            #expect(entries.flatMap { MerkleHash.leaf($0) } == tile.body, "bundle \(index) and its level 0 tile")
            leaves += entries
            index += 1
        }
        return leaves
    }

    private final class Wanted {
        var paths = Set<TilePath>()
    }
}

extension CollectorChain {
    /// The serialized entries at these seqs (indexes into ``entries``).
    func serialized(_ seqs: some Sequence<Int>) -> [[UInt8]] { seqs.map { entries[$0].serialized } }
}

/// An answer of `GET /v1/logs/{logId}/proof?seq=N`, read strictly as a client would: exactly its eight members.
struct InclusionAnswer {
    var logId: [UInt8]
    var seq: UInt64
    var leafIndex: UInt64
    var treeSize: UInt64
    var note: SignedNote
    var inclusion: [[UInt8]]
    var entry: [UInt8]

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    init(_ json: JSONValue?) throws {
        guard case .object(let members)? = json,
            Set(members.keys) == ["v", "logId", "seq", "leafIndex", "treeSize", "checkpoint", "inclusion", "entry"],
            members["v"] == .integer(2),
            let logId = members["logId"]?.stringValue.flatMap(Hex.decode), logId.count == 16,
            let seq = members["seq"]?.integerValue, let leafIndex = members["leafIndex"]?.integerValue,
            let treeSize = members["treeSize"]?.integerValue,
            let checkpoint = members["checkpoint"]?.stringValue,
            case .array(let hashes)? = members["inclusion"],
            let entry = members["entry"]?.stringValue.flatMap(Self.base64)
        else { throw Malformed(description: "not a proof answer: \(String(describing: json))") }
        self.logId = logId
        self.seq = UInt64(seq)
        self.leafIndex = UInt64(leafIndex)
        self.treeSize = UInt64(treeSize)
        note = try SignedNote(parsing: Array(checkpoint.utf8))
        inclusion = try hashes.map { hash in
            guard let bytes = hash.stringValue.flatMap(Self.base64), bytes.count == 32 else {
                throw Malformed(description: "an inclusion hash is not 32 bytes of base64")
            }
            return bytes
        }
        self.entry = entry
    }

    static func base64(_ text: String) -> [UInt8]? { Data(base64Encoded: text).map { Array($0) } }

    /// Checks the answer as `auditctl prove` would: the checkpoint verifies with `key` under its origin, is for the
    /// answer's tree size, and the entry is included at its leaf index.
    func verify(key: NoteVerifierKey) throws {
        let checkpoint = try Checkpoint(signedNote: note, origin: key.name, keys: [key])
        guard checkpoint.size == treeSize else { throw Malformed(description: "checkpoint size \(checkpoint.size)") }
        try MerkleProof.verifyInclusion(
            leafHash: MerkleHash.leaf(entry),
            index: leafIndex,
            size: treeSize,
            proof: inclusion,
            root: checkpoint.rootHash
        )
    }
}
