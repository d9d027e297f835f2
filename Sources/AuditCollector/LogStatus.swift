public import AuditChain
public import AuditWire

/// What the collector holds of one log: the answer of `GET /v1/logs/{logId}/head`.
public struct LogStatus: Sendable, Hashable {
    /// A range of missing sequence numbers above the head.
    public struct Gap: Sendable, Hashable {
        /// First missing seq.
        public var from: UInt64
        /// Last missing seq.
        public var to: UInt64
        /// Creates a gap.
        public init(from: UInt64, to: UInt64) {
            self.from = from
            self.to = to
        }
    }

    /// The log.
    public var logId: [UInt8]
    /// The contiguous head (nil while the genesis is not held).
    public var head: CollectorHead?
    /// Highest seq held.
    public var highestSeq: UInt64?
    /// Number of entries held.
    public var held: UInt64
    /// Missing ranges between the head and the highest seq held (at most ``maxListedGaps``).
    public var gaps: [Gap]
    /// Seqs at which a fork was refused.
    public var forks: [UInt64]
    /// Seqs at which a chain break was refused.
    public var chainBreaks: [UInt64]
    /// The signed head (nil while there is no head).
    public var receipt: CollectorReceipt?
    /// A device checkpoint the collector kept, and when it came.
    public struct KeptCheckpoint: Sendable, Hashable {
        /// The checkpoint as the device signed it.
        public var checkpoint: SignedCheckpoint
        /// When the batch carrying it arrived.
        public var receivedAt: AuditTimestamp
    }

    /// The highest device checkpoint kept (correctly signed, consistent with what is held). When its seq is
    /// above the head, the device has claimed entries the collector does not hold yet.
    public var deviceCheckpoint: KeptCheckpoint?
    /// Seqs at which a correctly signed device checkpoint named another entry than the one held.
    public var checkpointConflicts: [UInt64] = []
    /// Incidents (forks, chain breaks, checkpoint conflicts) refused but not kept as evidence because the log held
    /// ``CollectorStore/maxIncidentsPerLog`` already.
    public var incidentsNotKept: UInt64 = 0

    /// Format version 2: where the log's epochs stand up to the head (docs/FORMAT.md, section 13).
    public struct Epoch: Sendable, Hashable {
        /// The current epoch as the held chain states it.
        public var state: ChainRules.EpochState
        /// Whether the entry at the head is a close record.
        public var closed: Bool

        /// Creates an epoch status.
        public init(state: ChainRules.EpochState, closed: Bool) {
            self.state = state
            self.closed = closed
        }

        /// Whether the log is stale at `now`: not closed, and its current epoch began more than two epoch lengths
        /// before (its writer stopped without a close record, cannot deliver, or its newest entries were cut).
        public func isStale(at now: AuditTimestamp) -> Bool {
            !closed && ChainRules.openEnd(state, now: now) != nil
        }

        /// The JSON member, judged at `now`.
        public func json(now: AuditTimestamp) -> JSONValue {
            .object([
                "epoch": .integer(Int64(clamping: state.number)),
                "startedAt": .string(state.startsAt.rfc3339),
                "epochSeconds": .integer(Int64(clamping: state.epochSeconds)),
                "closed": .bool(closed),
                "stale": .bool(isStale(at: now)),
            ])
        }
    }

    /// Format version 2: the epochs up to the head; nil for a version 1 log.
    public var epoch: Epoch?

    /// How many gaps the status lists at most.
    public static let maxListedGaps = 1000

    /// Creates a status.
    public init(
        logId: [UInt8],
        head: CollectorHead?,
        highestSeq: UInt64?,
        held: UInt64,
        gaps: [Gap],
        forks: [UInt64],
        chainBreaks: [UInt64],
        receipt: CollectorReceipt?
    ) {
        self.logId = logId
        self.head = head
        self.highestSeq = highestSeq
        self.held = held
        self.gaps = gaps
        self.forks = forks
        self.chainBreaks = chainBreaks
        self.receipt = receipt
    }

    /// The JSON body.
    public var json: JSONValue {
        func integer(_ value: UInt64?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
        return .object([
            "v": .integer(SyncWire.version),
            "logId": .string(Hex.encode(logId)),
            "seq": integer(head?.seq),
            "entryHash": head.map { .string(Hex.encode($0.hash)) } ?? .null,
            "highestSeq": integer(highestSeq),
            "held": .integer(Int64(held)),
            "gaps": .array(gaps.map { .object(["from": .integer(Int64($0.from)), "to": .integer(Int64($0.to))]) }),
            "forks": .array(forks.map { .integer(Int64($0)) }),
            "chainBreaks": .array(chainBreaks.map { .integer(Int64($0)) }),
            "receipt": receipt?.json ?? .null,
            "deviceCheckpoint": deviceCheckpoint.map { kept in
                .object(["checkpoint": kept.checkpoint.json, "receivedAt": .string(kept.receivedAt.rfc3339)])
            } ?? .null,
            "checkpointConflicts": .array(checkpointConflicts.map { .integer(Int64($0)) }),
            "incidentsNotKept": .integer(Int64(clamping: incidentsNotKept)),
            "epoch": epoch?.json(now: AuditTimestamp.now()) ?? .null,
        ])
    }
}
