/// An RFC 6962 Merkle tree over leaf hashes held in memory: its root (`MTH`, RFC 6962 section 2.1), the inclusion
/// proof of a leaf (`PATH`, section 2.1.1) and the consistency proof between two sizes (`PROOF`, section 2.1.2),
/// by the recursive definitions of the RFC. What the reference data and the collector's tests prove against.
public struct MerkleTree: Sendable {
    /// The leaf hashes (``MerkleHash/leaf(_:)`` of each leaf), in order.
    public private(set) var leafHashes: [[UInt8]]

    /// A tree of these leaf hashes.
    public init(leafHashes: [[UInt8]] = []) {
        self.leafHashes = leafHashes
    }

    /// A tree of these leaves (hashed with ``MerkleHash/leaf(_:)``).
    public init(leaves: [[UInt8]]) {
        self.init(leafHashes: leaves.map { MerkleHash.leaf($0) })
    }

    /// Leaves in the tree.
    public var size: UInt64 { UInt64(leafHashes.count) }

    /// Appends a leaf.
    public mutating func append(leaf: [UInt8]) { leafHashes.append(MerkleHash.leaf(leaf)) }

    /// The root of the first `size` leaves (``MerkleHash/empty`` for 0); nil if the tree is smaller.
    public func root(size: UInt64? = nil) -> [UInt8]? {
        let size = size ?? self.size
        guard size <= self.size else { return nil }
        return Self.hash(leafHashes[0..<Int(size)])
    }

    /// The inclusion proof of leaf `index` in the tree of the first `size` leaves; nil if `index >= size` or the
    /// tree is smaller than `size`.
    public func inclusionProof(index: UInt64, size: UInt64) -> [[UInt8]]? {
        guard index < size, size <= self.size else { return nil }
        return Self.path(Int(index), leafHashes[0..<Int(size)])
    }

    /// The consistency proof from the first `first` leaves to the first `second`; nil unless
    /// `first <= second <= size`. Empty when `first` is 0 or equals `second`.
    public func consistencyProof(first: UInt64, second: UInt64) -> [[UInt8]]? {
        guard first <= second, second <= size else { return nil }
        guard first > 0, first < second else { return [] }
        return Self.subproof(Int(first), leafHashes[0..<Int(second)], complete: true)
    }

    /// `MTH(D[n])`.
    static func hash(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
        switch leaves.count {
        case 0: return MerkleHash.empty
        case 1: return leaves[leaves.startIndex]
        default:
            let k = largestPowerOfTwo(below: leaves.count)
            let split = leaves.startIndex + k
            return MerkleHash.node(hash(leaves[..<split]), hash(leaves[split...]))
        }
    }

    /// `PATH(m, D[n])`, `m` counted from the slice's start.
    static func path(_ m: Int, _ leaves: ArraySlice<[UInt8]>) -> [[UInt8]] {
        guard leaves.count > 1 else { return [] }
        let k = largestPowerOfTwo(below: leaves.count)
        let split = leaves.startIndex + k
        if m < k { return path(m, leaves[..<split]) + [hash(leaves[split...])] }
        return path(m - k, leaves[split...]) + [hash(leaves[..<split])]
    }

    /// `SUBPROOF(m, D[n], b)`, `m` counted from the slice's start.
    static func subproof(_ m: Int, _ leaves: ArraySlice<[UInt8]>, complete: Bool) -> [[UInt8]] {
        let n = leaves.count
        if m == n { return complete ? [] : [hash(leaves)] }
        let k = largestPowerOfTwo(below: n)
        let split = leaves.startIndex + k
        if m <= k { return subproof(m, leaves[..<split], complete: complete) + [hash(leaves[split...])] }
        return subproof(m - k, leaves[split...], complete: false) + [hash(leaves[..<split])]
    }

    /// The largest power of two smaller than `n` (`n > 1`): the size of the left subtree.
    static func largestPowerOfTwo(below n: Int) -> Int {
        Int(MerkleNodes.largestPowerOfTwo(below: UInt64(n)))
    }
}
