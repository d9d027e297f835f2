/// The tree stored as tiles (c2sp.org/tlog-tiles, "Merkle Tree"): the tile at level `L` and index `N` holds the
/// hashes of tree level `8L` with indexes `256N ..< 256N + 256`, concatenated (32 bytes each); a tile with fewer
/// than 256 hashes is partial (the right edge) and grows, a full tile never changes. Only every eighth tree level
/// is stored; the levels between are hashed from the tile below them when a root or a proof needs them.
///
/// Pure: the storage is the caller's. An append of many leaves rewrites only the right-edge tile of each level,
/// once: a batch of 1 000 entries writes a handful of rows.
public struct MerkleTiles {
    /// Tree levels per tile.
    public static let height = 8
    /// Hashes in a full tile.
    public static let width = 256

    /// Reads the stored tile at `level` and `index` (its hashes concatenated; empty or shorter when partial).
    public typealias Read = (_ level: Int, _ index: UInt64) throws -> [UInt8]

    /// A tile to store.
    public struct Tile: Sendable, Equatable {
        /// Tile level (tree level `8 * level`).
        public var level: Int
        /// Tile index.
        public var index: UInt64
        /// The hashes, concatenated.
        public var hashes: [UInt8]
        /// Hashes in the tile.
        public var width: Int { hashes.count / MerkleHash.size }
    }

    private let read: Read
    /// Tiles read or written through this value, and the levels hashed from them.
    private var pyramids: [TileKey: [[[UInt8]]]] = [:]

    private struct TileKey: Hashable {
        var level: Int
        var index: UInt64
    }

    /// The tree whose tiles `read` gives.
    public init(read: @escaping Read) {
        self.read = read
    }

    /// The tiles to store after appending `leafHashes` to a tree of `size` leaves: the right-edge tile of every
    /// level the leaves reach, each once, lowest level first.
    public mutating func append(leafHashes: [[UInt8]], toSize size: UInt64) throws -> [Tile] {
        var edges: [Int: Tile] = [:]
        var done: [Tile] = []
        var counts: [Int: UInt64] = [:]
        func add(_ hash: [UInt8], level: Int) throws {
            let count =
                counts[level] ?? (level * Self.height >= UInt64.bitWidth ? 0 : size >> UInt64(level * Self.height))
            let index = count / UInt64(Self.width)
            if edges[level]?.index != index {
                if let full = edges[level] { done.append(full) }
                let stored = count % UInt64(Self.width) == 0 ? [] : try read(level, index)
                guard stored.count == Int(count % UInt64(Self.width)) * MerkleHash.size else {
                    throw MerkleNodes.OutOfRange(
                        description: "tile \(level)/\(index) holds \(stored.count / MerkleHash.size) hashes, "
                            + "not the \(count % UInt64(Self.width)) a tree of \(size) leaves has"
                    )
                }
                edges[level] = Tile(level: level, index: index, hashes: stored)
            }
            edges[level]?.hashes += hash
            counts[level] = count + 1
            if let tile = edges[level], tile.width == Self.width {
                try add(Self.root(of: tile.hashes), level: level + 1)
            }
        }
        for hash in leafHashes { try add(hash, level: 0) }
        let written = (done + edges.values).sorted { ($0.level, $0.index) < ($1.level, $1.index) }
        for tile in written { pyramids[TileKey(level: tile.level, index: tile.index)] = nil }
        return written
    }

    /// The node reader over these tiles (each tile's levels hashed once per value).
    public mutating func nodes() -> MerkleNodes {
        // A class box: MerkleNodes' reader is a closure that may not capture `inout self`.
        let box = Box(self)
        return MerkleNodes { level, index in try box.node(level: level, index: index) }
    }

    /// The node at tree level `level`, index `index`: from the tile holding its subtree's bottom row.
    mutating func node(level: Int, index: UInt64) throws -> [UInt8] {
        let tileLevel = level / Self.height
        let rise = level % Self.height
        guard rise < UInt64.bitWidth, index <= UInt64.max >> UInt64(rise) else {
            throw MerkleNodes.OutOfRange(description: "no node \(level)/\(index)")
        }
        let first = index << UInt64(rise)
        let key = TileKey(level: tileLevel, index: first / UInt64(Self.width))
        if pyramids[key] == nil {
            let hashes = try read(key.level, key.index)
            var levels = [
                stride(from: 0, to: hashes.count, by: MerkleHash.size).map { Array(hashes[$0..<$0 + MerkleHash.size]) }
            ]
            while let below = levels.last, below.count > 1 {
                levels.append(
                    stride(from: 0, to: below.count - 1, by: 2).map { MerkleHash.node(below[$0], below[$0 + 1]) }
                )
            }
            pyramids[key] = levels
        }
        let offset = Int(first % UInt64(Self.width)) >> rise
        guard let levels = pyramids[key], rise < levels.count, offset < levels[rise].count else {
            throw MerkleNodes.OutOfRange(
                description: "tile \(key.level)/\(key.index) does not hold node \(level)/\(index)"
            )
        }
        return levels[rise][offset]
    }

    /// The root of a full tile's 256 hashes.
    static func root(of hashes: [UInt8]) -> [UInt8] {
        var row = stride(from: 0, to: hashes.count, by: MerkleHash.size).map {
            Array(hashes[$0..<$0 + MerkleHash.size])
        }
        while row.count > 1 {
            row = stride(from: 0, to: row.count, by: 2).map { MerkleHash.node(row[$0], row[$0 + 1]) }
        }
        return row[0]
    }

    /// Holds the tiles for the node reader's closure.
    private final class Box {
        var tiles: MerkleTiles
        init(_ tiles: MerkleTiles) { self.tiles = tiles }
        func node(level: Int, index: UInt64) throws -> [UInt8] { try tiles.node(level: level, index: index) }
    }
}
