public import TransparencyLog

/// The witness's decision on one `add-checkpoint` request whose log signature verified (c2sp.org/tlog-witness
/// "add-checkpoint"), against the latest checkpoint it cosigned for the origin: pure, no I/O.
public enum WitnessCheck: Sendable {
    /// What the witness recorded for an origin: the size and root hash of the latest checkpoint it cosigned.
    public struct State: Sendable, Equatable {
        /// The tree size.
        public var size: UInt64
        /// The root hash.
        public var rootHash: [UInt8]

        /// A state of `size` leaves with root `rootHash`.
        public init(size: UInt64, rootHash: [UInt8]) {
            self.size = size
            self.rootHash = rootHash
        }
    }

    /// The decision.
    public enum Decision: Sendable, Equatable {
        /// Record `State` (atomically with the check) and cosign.
        case cosign(State)
        /// `409 Conflict` with the witness's size in a `text/x.tlog.size` body: the old size is not the witness's.
        case staleOldSize(UInt64)
        /// Refused with `status` (400, 409 or 422) for `reason`; the state is left as it is.
        case refuse(status: Int, reason: String)
    }

    /// Decides on `request` (whose checkpoint is `checkpoint`, already verified) given the witness's `stored` state
    /// for its origin (nil: it never cosigned one). The spec's checks, in its order:
    ///
    /// 1. the old size must not exceed the checkpoint's size (400);
    /// 2. the old size must be the stored size, or 0 with nothing stored (409 with the stored size);
    /// 3. an old size of 0 takes an empty proof (400);
    /// 4. an old size equal to the checkpoint's size needs the stored root and an empty proof (409, 422);
    /// 5. otherwise the RFC 6962 consistency proof from the stored root must verify (422).
    public static func decide(
        _ request: AddCheckpointRequest,
        checkpoint: Checkpoint,
        stored: State?
    ) -> Decision {
        let old = request.oldSize
        guard old <= checkpoint.size else {
            return .refuse(status: 400, reason: "old size \(old) is beyond the checkpoint's size \(checkpoint.size)")
        }
        let storedSize = stored?.size ?? 0
        guard old == storedSize else { return .staleOldSize(storedSize) }
        let new = State(size: checkpoint.size, rootHash: checkpoint.rootHash)
        guard let stored else {
            guard request.proof.isEmpty else {
                return .refuse(status: 400, reason: "a request with old size 0 must carry an empty proof")
            }
            return .cosign(new)
        }
        // Steps 4 and 5: the one extension rule (TreeExtension), with the spec's statuses.
        switch TreeExtension.check(
            from: TreeExtension.Head(size: stored.size, rootHash: stored.rootHash),
            to: checkpoint.head,
            proof: request.proof
        ) {
        case .extends:
            return .cosign(new)
        case .forked:
            return .refuse(
                status: 409,
                reason: "a different root hash for the tree of \(old) leaves it cosigned: the log forked"
            )
        case .proofAtEqualSize:
            return .refuse(status: 422, reason: "a proof between two trees of the same size must be empty")
        case .proofFromEmptyTree:
            // The stored checkpoint was of the empty tree: nothing to prove from it.
            return .refuse(status: 400, reason: "a request with old size 0 must carry an empty proof")
        case .shrank:
            // Step 1 refused it already (the stored size is the old size).
            return .refuse(status: 400, reason: "old size \(old) is beyond the checkpoint's size \(checkpoint.size)")
        case .missingProof:
            return .refuse(status: 422, reason: "the request carries no consistency proof")
        case .notProved(let error):
            return .refuse(
                status: 422,
                reason: "the tree of \(checkpoint.size) leaves is not proved consistent with the tree of \(old) it "
                    + "cosigned (\(error))"
            )
        }
    }
}
