import AuditChain

extension CollectorStore {
    /// Where a format version 2 log's epochs stand as far as the collector holds it (docs/FORMAT.md, section 13):
    /// the latest genesis or epoch record at or below `head`, and whether the entry at `head` is a close record;
    /// nil for a version 1 log, or before its genesis is held.
    ///
    /// The latest epoch record is where the key of the epoch before it stops signing: its seq is the highest
    /// `untilSeq` of the log's keys (``ChainRules/rotation(at:signer:next:)``; the genesis, seq 0, when no key
    /// stopped yet), so it is found with the keys table's few rows and one seek, not a scan of the entries. In a
    /// version 1 log that seq is a key rotation, and the answer nil.
    static func epochStatus(_ db: any SQLSession, logId: [UInt8], head: UInt64?) throws -> LogStatus.Epoch? {
        guard let head else { return nil }
        let log = SQLValue.blob(logId)
        let until = try db.row(
            "SELECT MAX(untilSeq) AS seq FROM keys WHERE logId = ? AND untilSeq <= ?",
            [log, .integer(Int64(clamping: head))]
        )
        let recordSeq = try until?.optionalInteger("seq") ?? 0
        guard
            let row = try db.row("SELECT bytes FROM entries WHERE logId = ? AND seq = ?", [log, .integer(recordSeq)]),
            let entry = try? SealedEntry(serialized: try row.blob("bytes")),
            entry.header.version == FormatConstants.version2,
            let record = try? SystemRecord(kind: entry.header.kind, payload: entry.payload)
        else { return nil }
        let state: ChainRules.EpochState
        switch record {
        case .genesis(let genesis):
            guard let seconds = genesis.epochSeconds else { return nil }
            state = ChainRules.EpochState(number: 0, startsAt: entry.header.time, epochSeconds: seconds, recordSeq: 0)
        case .epoch(let epoch):
            state = ChainRules.EpochState(
                number: epoch.epoch,
                startsAt: entry.header.time,
                epochSeconds: epoch.epochSeconds,
                recordSeq: entry.header.seq
            )
        default:
            return nil
        }
        let last = try db.row(
            "SELECT kind FROM entries WHERE logId = ? AND seq = ?",
            [log, .integer(Int64(clamping: head))]
        )
        let closed = try last.map { try $0.integer("kind") == Int64(RecordKind.close.rawValue) } ?? false
        return LogStatus.Epoch(state: state, closed: closed)
    }

    /// Where a log's epochs stand up to its contiguous head (``epochStatus(_:logId:head:)``): nil for a version 1
    /// log or one with nothing held.
    public func epochStatus(logId: [UInt8]) async throws -> LogStatus.Epoch? {
        try await database.read { db in
            try Self.epochStatus(db, logId: logId, head: try Self.head(db, logId: logId)?.seq)
        }
    }

    /// Format version 2: the entry at `seq` and, when it carries no signature of its own, the held entries after it
    /// up to the first one that does (docs/FORMAT.md section 13.1): what a proof file carries so that the entry can be
    /// checked alone (docs/PROOFS.md). Just the entry when it is signed, or when the run is not held whole.
    public func coveringRun(logId: [UInt8], seq: UInt64, entry: [UInt8]) async throws -> [[UInt8]] {
        guard !SealedEntry.carriesSignature(serialized: entry), seq < .max else { return [entry] }
        let rows = try await database.read { db in
            try db.rows(
                "SELECT bytes FROM entries WHERE logId = ? AND seq > ? ORDER BY seq LIMIT ?",
                [.blob(logId), .integer(Int64(clamping: seq)), .integer(Int64(FormatConstants.maxUnsignedRun))]
            ).map { try $0.blob("bytes") }
        }
        return CoveringRun.prefixUpToSignature([entry] + rows)
    }
}
