/// Roots and proofs of an RFC 6962 tree read from the hashes of its complete subtrees: the node at `level` `L` and
/// `index` `i` is the root of leaves `i * 2^L ..< (i + 1) * 2^L` (full nodes never change). A root or a proof reads
/// `O(log n)` nodes, whatever the tree's size; the reader is the caller's (``MerkleTiles/nodes()`` over stored
/// tiles, a closure in tests). The results equal ``MerkleTree``'s, which follows the RFC's recursive definitions
/// over all leaves.
public struct MerkleNodes {
    /// Reads the stored node at `level` and `index` (level 0: the leaf hashes).
    public typealias Read = (_ level: Int, _ index: UInt64) throws -> [UInt8]

    /// A proof asked for sizes or an index the tree cannot have.
    public struct OutOfRange: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was asked.
        public var description: String

        /// An error saying what was asked.
        public init(description: String) {
            self.description = description
        }
    }

    private let read: Read

    /// The tree whose nodes `read` gives.
    public init(read: @escaping Read) {
        self.read = read
    }

    /// The root of the first `size` leaves.
    public func root(size: UInt64) throws -> [UInt8] {
        size == 0 ? MerkleHash.empty : try hash(0, size)
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves, as RFC 6962's `PATH`.
    /// - Throws: ``OutOfRange`` unless `index < size`; the reader's errors.
    public func inclusionProof(index: UInt64, size: UInt64) throws -> [[UInt8]] {
        guard index < size else { throw OutOfRange(description: "leaf index \(index) is not below the size \(size)") }
        var proof: [[UInt8]] = []
        try path(index, 0, size, into: &proof)
        return proof
    }

    /// The consistency proof from `first` to `second` leaves, as RFC 6962's `PROOF`.
    /// - Throws: ``OutOfRange`` unless `0 < first < second`; the reader's errors.
    public func consistencyProof(first: UInt64, second: UInt64) throws -> [[UInt8]] {
        guard 0 < first, first < second else {
            throw OutOfRange(description: "no consistency proof from size \(first) to \(second)")
        }
        var proof: [[UInt8]] = []
        try subproof(first, 0, second, complete: true, into: &proof)
        return proof
    }

    /// `MTH(D[start ..< end])` for a range of the RFC's recursion (its start is a multiple of the largest power of
    /// two not above its length): a stored node when the range is complete, else its two halves.
    func hash(_ start: UInt64, _ end: UInt64) throws -> [UInt8] {
        let count = end - start
        if count & (count - 1) == 0 {
            let level = count.trailingZeroBitCount
            return try read(level, start >> UInt64(level))
        }
        let split = start + Self.largestPowerOfTwo(below: count)
        return MerkleHash.node(try hash(start, split), try hash(split, end))
    }

    /// `PATH(m, D[start ..< end])`, appended to `proof` from the leaf up.
    func path(_ m: UInt64, _ start: UInt64, _ end: UInt64, into proof: inout [[UInt8]]) throws {
        guard end - start > 1 else { return }
        let split = start + Self.largestPowerOfTwo(below: end - start)
        if m < split {
            try path(m, start, split, into: &proof)
            proof.append(try hash(split, end))
        } else {
            try path(m, split, end, into: &proof)
            proof.append(try hash(start, split))
        }
    }

    /// `SUBPROOF(m, D[start ..< end], complete)`, appended to `proof` from the bottom up.
    func subproof(_ m: UInt64, _ start: UInt64, _ end: UInt64, complete: Bool, into proof: inout [[UInt8]]) throws {
        if m == end {
            if !complete { proof.append(try hash(start, end)) }
            return
        }
        let split = start + Self.largestPowerOfTwo(below: end - start)
        if m <= split {
            try subproof(m, start, split, complete: complete, into: &proof)
            proof.append(try hash(split, end))
        } else {
            try subproof(m, split, end, complete: false, into: &proof)
            proof.append(try hash(start, split))
        }
    }

    /// The largest power of two smaller than `count` (`count > 1`).
    static func largestPowerOfTwo(below count: UInt64) -> UInt64 {
        UInt64(1) << UInt64(UInt64.bitWidth - 1 - (count - 1).leadingZeroBitCount)
    }
}

/// Not Sendable: it reads nodes through a caller's closure, which need not be Sendable.
@available(*, unavailable)
extension MerkleNodes: Sendable {}
