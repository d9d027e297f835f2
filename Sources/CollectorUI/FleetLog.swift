public import AuditChain

/// What the collector holds of one device log, as one row of the fleet page: plain facts read by the collector's
/// store in a few aggregate queries, from which the row's lag, gap state and health are derived here.
public struct FleetLog: Sendable, Hashable {
    /// The log id, 32 lowercase hex digits.
    public var logId: String
    /// The device id its genesis names (device-supplied: rendered as text); nil while the genesis is not held.
    public var deviceId: String?
    /// The contiguous head's seq; nil while the genesis is not held.
    public var headSeq: UInt64?
    /// Leaves in the collector's Merkle tree of the log (the size of its checkpoint).
    public var treeSize: UInt64
    /// Entries held; nil when not counted (the fleet page does not count them: a scan of every entry; the log's
    /// page does).
    public var held: UInt64?
    /// The highest seq held.
    public var highestSeq: UInt64?
    /// When the collector last stored an entry of the log.
    public var lastIngest: AuditTimestamp?
    /// The seq of the highest device checkpoint the collector kept, and when it came.
    public var deviceCheckpointSeq: UInt64?
    /// When the batch carrying that checkpoint arrived.
    public var deviceCheckpointAt: AuditTimestamp?
    /// Removal records held: each bridges the gap of the entries it accounts for.
    public var removalRecords: UInt64
    /// Refused forks kept as evidence.
    public var forks: UInt64
    /// Refused chain breaks kept as evidence.
    public var chainBreaks: UInt64
    /// Device checkpoints that contradicted a held entry.
    public var checkpointConflicts: UInt64
    /// Incidents counted but not kept (past the bound per log).
    public var incidentsNotKept: UInt64
    /// The largest tree size of the log a witness cosigned for this collector; nil when none did.
    public var witnessedSize: UInt64?
    /// Format version 2: the current epoch as held up to the head (docs/FORMAT.md section 13); nil for version 1.
    public var epoch: ChainRules.EpochState? = nil
    /// Format version 2: whether the entry at the head is a close record.
    public var closed = false
    /// Format version 2: not closed, and the current epoch began more than two epoch lengths before the page was
    /// read (`ChainRules.openEnd`): the log's epochs stopped. Shown in the row's epoch cell; not part of its health
    /// colour, which the fleet's aggregate queries decide for every log (the epochs are read for the rows shown).
    public var epochStale = false

    /// Creates a row's facts; the counts default to none.
    public init(
        logId: String,
        deviceId: String? = nil,
        headSeq: UInt64? = nil,
        treeSize: UInt64 = 0,
        held: UInt64? = nil,
        highestSeq: UInt64? = nil,
        lastIngest: AuditTimestamp? = nil,
        deviceCheckpointSeq: UInt64? = nil,
        deviceCheckpointAt: AuditTimestamp? = nil,
        removalRecords: UInt64 = 0,
        forks: UInt64 = 0,
        chainBreaks: UInt64 = 0,
        checkpointConflicts: UInt64 = 0,
        incidentsNotKept: UInt64 = 0,
        witnessedSize: UInt64? = nil
    ) {
        self.logId = logId
        self.deviceId = deviceId
        self.headSeq = headSeq
        self.treeSize = treeSize
        self.held = held
        self.highestSeq = highestSeq
        self.lastIngest = lastIngest
        self.deviceCheckpointSeq = deviceCheckpointSeq
        self.deviceCheckpointAt = deviceCheckpointAt
        self.removalRecords = removalRecords
        self.forks = forks
        self.chainBreaks = chainBreaks
        self.checkpointConflicts = checkpointConflicts
        self.incidentsNotKept = incidentsNotKept
        self.witnessedSize = witnessedSize
    }

    /// Entries the device's own checkpoint announces above the contiguous head (all up to it without a head).
    public var lag: UInt64 {
        guard let announced = deviceCheckpointSeq else { return 0 }
        guard let headSeq else { return announced &+ 1 }
        return announced > headSeq ? announced - headSeq : 0
    }

    /// Whether entries are held above the head, past a gap no removal record bridges.
    public var unbridgedGap: Bool {
        guard let highestSeq else { return false }
        guard let headSeq else { return true }
        return highestSeq > headSeq
    }

    /// Every incident of the log, kept or counted.
    public var incidents: UInt64 {
        forks.addingReportingOverflow(chainBreaks).partialValue
            .addingReportingOverflow(checkpointConflicts).partialValue
            .addingReportingOverflow(incidentsNotKept).partialValue
    }

    /// The row's colour (``LogHealth/of(incidents:hasHead:unbridgedGap:lag:)``).
    public var health: LogHealth {
        LogHealth.of(incidents: incidents, hasHead: headSeq != nil, unbridgedGap: unbridgedGap, lag: lag)
    }

    /// The row in the fleet page's JSON twin.
    public var json: JSONValue {
        func number(_ value: UInt64?) -> JSONValue { value.map { .unsigned($0) } ?? .null }
        func time(_ value: AuditTimestamp?) -> JSONValue { value.map { .string($0.rfc3339) } ?? .null }
        return .object([
            "logId": .string(logId),
            "deviceId": deviceId.map { .string($0) } ?? .null,
            "headSeq": number(headSeq),
            "treeSize": .unsigned(treeSize),
            "held": number(held),
            "highestSeq": number(highestSeq),
            "lastIngest": time(lastIngest),
            "lag": .unsigned(lag),
            "lagSince": lag > 0 ? time(deviceCheckpointAt) : .null,
            "deviceCheckpointSeq": number(deviceCheckpointSeq),
            "gapsBridged": .unsigned(removalRecords),
            "unbridgedGap": .bool(unbridgedGap),
            "forks": .unsigned(forks),
            "chainBreaks": .unsigned(chainBreaks),
            "checkpointConflicts": .unsigned(checkpointConflicts),
            "incidentsNotKept": .unsigned(incidentsNotKept),
            "witnessedSize": number(witnessedSize),
            "epoch": number(epoch?.number),
            "epochStartedAt": time(epoch?.startsAt),
            "epochSeconds": number(epoch?.epochSeconds),
            "closed": .bool(closed),
            "epochStale": .bool(epochStale),
            "health": .string(health.rawValue),
        ])
    }
}
