/// Checks of RFC 6962 proofs against tree heads, with the algorithms of RFC 9162 sections 2.1.3.2 (inclusion) and
/// 2.1.4.2 (consistency). Pure; every input may be hostile: sizes and indexes are any `UInt64`, hashes any bytes,
/// proofs any length, and nothing traps.
public enum MerkleProof: Sendable {
    /// Why a proof does not hold.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The leaf index is not below the tree size.
        case indexBeyondSize(index: UInt64, size: UInt64)
        /// The second tree is smaller than the first.
        case sizesDecrease(first: UInt64, second: UInt64)
        /// The proof has more or fewer hashes than the sizes call for.
        case wrongLength(expected: Int, found: Int)
        /// The consistency proof has more or fewer hashes than the sizes call for.
        case proofLength
        /// A hash in the proof (or a root, or the leaf) is not 32 bytes.
        case badHash
        /// The proof leads to another root than the one given.
        case rootMismatch
        /// Equal sizes with different roots: two trees that cannot both be the log.
        case differentRootsAtEqualSize
        /// A consistency proof from the empty tree: there is nothing to prove.
        case emptyFirstTree

        public var description: String {
            switch self {
            case .indexBeyondSize(let index, let size): "leaf index \(index) is not below the tree size \(size)"
            case .sizesDecrease(let first, let second): "the tree shrinks from size \(first) to \(second)"
            case .wrongLength(let expected, let found):
                "the proof has \(found) hashes where the sizes call for \(expected)"
            case .proofLength: "the proof has more or fewer hashes than the sizes call for"
            case .badHash: "a hash is not 32 bytes"
            case .rootMismatch: "the proof does not lead to the given root"
            case .differentRootsAtEqualSize: "two different roots for the same tree size"
            case .emptyFirstTree: "a consistency proof from the empty tree proves nothing"
            }
        }
    }

    /// Checks that `leafHash` is leaf `index` of the tree of `size` leaves whose root is `root`.
    public static func verifyInclusion(
        leafHash: [UInt8],
        index: UInt64,
        size: UInt64,
        proof: [[UInt8]],
        root: [UInt8]
    ) throws(Failure) {
        guard index < size else { throw .indexBeyondSize(index: index, size: size) }
        let expected = inclusionLength(index: index, size: size)
        guard proof.count == expected else { throw .wrongLength(expected: expected, found: proof.count) }
        guard leafHash.count == MerkleHash.size, root.count == MerkleHash.size,
            proof.allSatisfy({ $0.count == MerkleHash.size })
        else { throw .badHash }
        guard rootFromInclusion(leafHash: leafHash, index: index, size: size, proof: proof) == root else {
            throw .rootMismatch
        }
    }

    /// The root an inclusion proof leads to (RFC 9162 section 2.1.3.2, steps 2 to 4); the caller has checked the
    /// index and the proof's length.
    static func rootFromInclusion(leafHash: [UInt8], index: UInt64, size: UInt64, proof: [[UInt8]]) -> [UInt8] {
        var fn = index
        var sn = size - 1
        var hash = leafHash
        for sibling in proof {
            if fn & 1 == 1 || fn == sn {
                hash = MerkleHash.node(sibling, hash)
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                hash = MerkleHash.node(hash, sibling)
            }
            fn >>= 1
            sn >>= 1
        }
        return hash
    }

    /// Checks that the tree of `second` leaves with root `secondRoot` extends the tree of `first` leaves with root
    /// `firstRoot`. Equal sizes need an empty proof and equal roots; a first tree of size 0 is refused
    /// (``Failure/emptyFirstTree``): there is nothing to prove against it.
    public static func verifyConsistency(
        first: UInt64,
        second: UInt64,
        firstRoot: [UInt8],
        secondRoot: [UInt8],
        proof: [[UInt8]]
    ) throws(Failure) {
        guard first <= second else { throw .sizesDecrease(first: first, second: second) }
        // Nothing is consistent with an empty tree in a way a proof could show (the reference data refuses it too):
        // whoever holds no earlier tree head has nothing to check.
        guard first > 0 else { throw .emptyFirstTree }
        if first == second {
            guard proof.isEmpty else { throw .proofLength }
            guard firstRoot == secondRoot else { throw .differentRootsAtEqualSize }
            return
        }
        guard firstRoot.count == MerkleHash.size, secondRoot.count == MerkleHash.size,
            proof.allSatisfy({ $0.count == MerkleHash.size })
        else { throw .badHash }
        guard !proof.isEmpty else { throw .proofLength }
        // RFC 9162 section 2.1.4.2: a first tree that is a complete subtree is its own first node.
        let path = first & (first - 1) == 0 ? [firstRoot] + proof : proof
        var fn = first - 1
        var sn = second - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var firstHash = path[0]
        var secondHash = path[0]
        for node in path.dropFirst() {
            guard sn != 0 else { throw .proofLength }
            if fn & 1 == 1 || fn == sn {
                firstHash = MerkleHash.node(node, firstHash)
                secondHash = MerkleHash.node(node, secondHash)
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                secondHash = MerkleHash.node(secondHash, node)
            }
            fn >>= 1
            sn >>= 1
        }
        guard sn == 0 else { throw .proofLength }
        guard firstHash == firstRoot, secondHash == secondRoot else { throw .rootMismatch }
    }

    /// Hashes in the inclusion proof of leaf `index` in a tree of `size` leaves (`index < size`): one per level
    /// below the root where the leaf's path has a sibling.
    public static func inclusionLength(index: UInt64, size: UInt64) -> Int {
        let inner = innerLength(index: index, size: size)
        return inner + (index >> UInt64(inner)).nonzeroBitCount
    }

    /// Levels where the paths of leaf `index` and of the last leaf (`size - 1`) differ below their common ancestor.
    static func innerLength(index: UInt64, size: UInt64) -> Int {
        let differing = index ^ (size - 1)
        return differing == 0 ? 0 : UInt64.bitWidth - differing.leadingZeroBitCount
    }
}
