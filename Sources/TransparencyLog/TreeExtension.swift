/// Whether a newer tree head of a log extends an older one: the one rule the agent (a receipt's tree against the
/// last one it verified), the witness (`add-checkpoint` against the tree it last cosigned) and `auditctl
/// verify-consistency` (NEW against OLD) apply. Pure; every input may be hostile.
///
/// In order: a smaller tree does not extend (``Verdict/shrank``); a tree of the same size extends only with the same
/// root (``Verdict/forked``) and an empty proof; every tree extends the empty tree, with an empty proof; otherwise
/// the RFC 6962 consistency proof (``MerkleProof/verifyConsistency(first:second:firstRoot:secondRoot:proof:)``) must
/// lead from the old root to the new one.
public enum TreeExtension: Sendable {
    /// A tree head: its size and root hash.
    public struct Head: Sendable, Equatable {
        /// The number of leaves.
        public var size: UInt64
        /// The root hash.
        public var rootHash: [UInt8]

        /// The tree of `size` leaves with root `rootHash`.
        public init(size: UInt64, rootHash: [UInt8]) {
            self.size = size
            self.rootHash = rootHash
        }
    }

    /// What the check found.
    public enum Verdict: Sendable, Equatable {
        /// The new tree extends the old one.
        case extends
        /// The new tree is smaller than the old one.
        case shrank
        /// The trees have the same size and different roots: two histories.
        case forked
        /// The trees are the same, but a non-empty proof came with them (a proof between equal sizes is empty).
        case proofAtEqualSize
        /// The old tree is empty, but a non-empty proof came with it (nothing is proved against the empty tree).
        case proofFromEmptyTree
        /// The sizes differ and no proof was given.
        case missingProof
        /// The consistency proof does not hold, for this reason.
        case notProved(MerkleProof.Failure)
    }

    /// Checks that `new` extends `old` with `proof` (nil: none was given).
    public static func check(from old: Head, to new: Head, proof: [[UInt8]]?) -> Verdict {
        guard new.size >= old.size else { return .shrank }
        if new.size == old.size {
            guard new.rootHash == old.rootHash else { return .forked }
            return proof?.isEmpty ?? true ? .extends : .proofAtEqualSize
        }
        if old.size == 0 { return proof?.isEmpty ?? true ? .extends : .proofFromEmptyTree }
        guard let proof else { return .missingProof }
        do {
            try MerkleProof.verifyConsistency(
                first: old.size,
                second: new.size,
                firstRoot: old.rootHash,
                secondRoot: new.rootHash,
                proof: proof
            )
            return .extends
        } catch {
            return .notProved(error)
        }
    }
}

extension Checkpoint {
    /// The checkpoint's tree head (``TreeExtension/Head``).
    public var head: TreeExtension.Head { TreeExtension.Head(size: size, rootHash: rootHash) }
}
