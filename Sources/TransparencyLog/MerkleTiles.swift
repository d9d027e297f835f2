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

    /// The tree whose tiles `read` gives.
    public init(read: @escaping Read) {
        self.read = read
    }

    /// The tiles to store after appending `leafHashes` to a tree of `size` leaves: the right-edge tile of every
    /// level the leaves reach, and every tile they fill, each once, lowest level first.
    public func append(leafHashes: [[UInt8]], toSize size: UInt64) throws -> [Tile] {
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
        return (done + edges.values).sorted { ($0.level, $0.index) < ($1.level, $1.index) }
    }

    /// How many hashes the tile at `level` and `index` holds in a tree of `size` leaves (c2sp.org/tlog-tiles,
    /// "Partial Tiles"): 256 for a full tile, 1 ... 255 for the partial one at the right edge, 0 for none. Level
    /// `l` has `floor(size / 256^l)` hashes.
    public static func tileWidth(level: Int, index: UInt64, size: UInt64) -> Int {
        guard level >= 0, level * height < UInt64.bitWidth, index <= UInt64.max / UInt64(width) else { return 0 }
        let count = size >> UInt64(level * height)
        let start = index * UInt64(width)
        return count <= start ? 0 : Int(min(count - start, UInt64(width)))
    }

    /// A node reader over these tiles for roots and proofs: the node at tree level `l`, index `i` comes from the
    /// tile holding its subtree's bottom row, each tile read and hashed up once per reader.
    public func nodes() -> MerkleNodes {
        let pyramids = Pyramids(read: read)
        return MerkleNodes { level, index in try pyramids.node(level: level, index: index) }
    }

    /// The hashes of a tile, one per element.
    static func hashes(_ bytes: [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: bytes.count - bytes.count % MerkleHash.size, by: MerkleHash.size).map {
            Array(bytes[$0..<$0 + MerkleHash.size])
        }
    }

    /// The row above `row`: each pair hashed into its parent (an odd last hash has no parent yet).
    static func parents(_ row: [[UInt8]]) -> [[UInt8]] {
        stride(from: 0, to: row.count - 1, by: 2).map { MerkleHash.node(row[$0], row[$0 + 1]) }
    }

    /// The root of a full tile's 256 hashes.
    static func root(of bytes: [UInt8]) -> [UInt8] {
        var row = hashes(bytes)
        while row.count > 1 { row = parents(row) }
        return row[0]
    }

    /// The tiles one reader has read, with every level hashed from them.
    private final class Pyramids {
        let read: Read
        var levels: [TileKey: [[[UInt8]]]] = [:]

        init(read: @escaping Read) {
            self.read = read
        }

        func node(level: Int, index: UInt64) throws -> [UInt8] {
            let rise = level % MerkleTiles.height
            guard index <= UInt64.max >> UInt64(rise) else {
                throw MerkleNodes.OutOfRange(description: "no node \(level)/\(index)")
            }
            let first = index << UInt64(rise)
            let key = TileKey(level: level / MerkleTiles.height, index: first / UInt64(MerkleTiles.width))
            if levels[key] == nil {
                var pyramid = [MerkleTiles.hashes(try read(key.level, key.index))]
                while let top = pyramid.last, top.count > 1 { pyramid.append(MerkleTiles.parents(top)) }
                levels[key] = pyramid
            }
            let offset = Int(first % UInt64(MerkleTiles.width)) >> rise
            guard let pyramid = levels[key], rise < pyramid.count, offset < pyramid[rise].count else {
                throw MerkleNodes.OutOfRange(
                    description: "tile \(key.level)/\(key.index) does not hold node \(level)/\(index)"
                )
            }
            return pyramid[rise][offset]
        }
    }

    private struct TileKey: Hashable {
        var level: Int
        var index: UInt64
    }
}

/// Not Sendable: it reads tiles through a caller's closure, which need not be Sendable.
@available(*, unavailable)
extension MerkleTiles: Sendable {}
