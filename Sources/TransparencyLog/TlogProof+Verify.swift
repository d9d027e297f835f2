extension TlogProof {
    /// Why a proof file is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file is larger than the parser's limit.
        case tooLarge(size: Int, limit: Int)
        /// The first line is not `c2sp.org/tlog-proof@v1`.
        case missingHeader
        /// The `extra` line's data is not canonical standard base64, or is empty.
        case malformedExtra
        /// There is no `index ` line where the spec puts it.
        case missingIndex
        /// The index is not a decimal without leading zeros that fits a `UInt64`.
        case malformedIndex
        /// A proof line (1-based in the file) is not canonical standard base64 of a 32-byte hash.
        case malformedHash(line: Int)
        /// More proof hashes than any tree of `UInt64` size needs.
        case tooManyHashes
        /// The file ends before the empty line that precedes the checkpoint.
        case missingCheckpoint
        /// The checkpoint is not a well-formed signed note.
        case note(SignedNote.Failure)
        /// The checkpoint is malformed, from another origin, or not signed as it must be.
        case checkpoint(Checkpoint.Failure)
        /// The inclusion proof does not bind the entry to the checkpoint's root hash.
        case inclusion(MerkleProof.Failure)

        public var description: String {
            switch self {
            case .tooLarge(let size, let limit): "the proof is \(size) bytes, more than the limit of \(limit)"
            case .missingHeader: "the proof does not start with the line \(TlogProof.header)"
            case .malformedExtra: "the extra line's data is not canonical base64 of at least one byte"
            case .missingIndex: "the proof has no 'index <n>' line after its header (and extra line)"
            case .malformedIndex: "the index is not a decimal without leading zeros that fits 64 bits"
            case .malformedHash(let line): "proof line \(line) is not the base64 of a 32-byte hash"
            case .tooManyHashes: "the inclusion proof has more than \(TlogProof.maxProofHashes) hashes"
            case .missingCheckpoint: "the proof has no empty line followed by a checkpoint"
            case .note(let failure): "the proof's checkpoint note: \(failure)"
            case .checkpoint(let failure): "the proof's checkpoint: \(failure)"
            case .inclusion(let failure): "the entry is not proved in the checkpoint's tree: \(failure)"
            }
        }
    }

    /// Checks that `entry` is leaf ``index`` of the tree the checkpoint commits to, in the order of c2sp.org/tlog-proof
    /// "Verifying a tlog proof": the leaf hash is ``MerkleHash/leaf(_:)`` of `entry` (step 1, ours); the checkpoint
    /// must be from `origin` and signed by one of `keys` (step 2); witness cosignatures are not checked, their lines
    /// are ignored as unknown signatures (step 3 is a policy this library leaves to its callers); the inclusion proof
    /// must lead from the leaf hash to the checkpoint's root (step 4).
    ///
    /// `entry` comes from the caller, who may take it from ``extra``: it is the proof that authenticates it.
    ///
    /// - Returns: the verified checkpoint.
    /// - Throws: ``Failure/checkpoint(_:)`` or ``Failure/inclusion(_:)``.
    @discardableResult
    public func verify(entry: [UInt8], origin: String, keys: [NoteVerifierKey]) throws(Failure) -> Checkpoint {
        let leafHash = MerkleHash.leaf(entry)
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint(signedNote: note, origin: origin, keys: keys)
        } catch {
            throw .checkpoint(error)
        }
        do {
            try MerkleProof.verifyInclusion(
                leafHash: leafHash,
                index: index,
                size: checkpoint.size,
                proof: inclusionProof,
                root: checkpoint.rootHash
            )
        } catch {
            throw .inclusion(error)
        }
        return checkpoint
    }
}
