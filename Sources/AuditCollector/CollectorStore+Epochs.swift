import AuditChain

extension CollectorStore {
    /// The epoch a format version 2 genesis or epoch record begins, from its bytes; nil for any other entry (a
    /// version 1 genesis or key rotation among them).
    static func epochState(record bytes: [UInt8]) -> ChainRules.EpochState? {
        guard let entry = try? SealedEntry(serialized: bytes), entry.header.version == FormatConstants.version2,
            let record = try? SystemRecord(kind: entry.header.kind, payload: entry.payload)
        else { return nil }
        switch record {
        case .genesis(let genesis):
            guard let seconds = genesis.epochSeconds else { return nil }
            return ChainRules.EpochState(number: 0, startsAt: entry.header.time, epochSeconds: seconds, recordSeq: 0)
        case .epoch(let epoch):
            return ChainRules.EpochState(
                number: epoch.epoch,
                startsAt: entry.header.time,
                epochSeconds: epoch.epochSeconds,
                recordSeq: entry.header.seq
            )
        default:
            return nil
        }
    }

    /// Where the epochs of every format version 2 log (or of `only`) stand as far as the collector holds it
    /// (docs/FORMAT.md, section 13), in one query: the latest genesis or epoch record at or below its contiguous
    /// head, and whether the entry at the head is a close record. Version 1 logs, and logs whose genesis is not held,
    /// are left out.
    ///
    /// The latest epoch record is where the key of the epoch before it stops signing: its seq is the highest
    /// `untilSeq` of the log's keys up to the head (``ChainRules/rotation(at:signer:next:)``; the genesis, seq 0,
    /// when no key stopped yet), so it is found with the keys table's few rows and one seek per log, not a scan of
    /// the entries. In a version 1 log that seq is a key rotation (or its genesis), which begins no epoch.
    static func epochStatuses(_ db: any SQLSession, only logId: [UInt8]?) throws -> [[UInt8]: LogStatus.Epoch] {
        let rows = try db.rows(
            """
            SELECT k.logId AS logId, e.bytes AS record, t.kind AS headKind
            FROM (
                SELECT keys.logId AS logId, COALESCE(MAX(keys.untilSeq), 0) AS recordSeq, heads.seq AS headSeq
                FROM keys JOIN heads ON heads.logId = keys.logId
                WHERE (keys.untilSeq IS NULL OR keys.untilSeq <= heads.seq)\(logId == nil ? "" : " AND keys.logId = ?")
                GROUP BY keys.logId, heads.seq
            ) AS k
            JOIN entries AS e ON e.logId = k.logId AND e.seq = k.recordSeq
            JOIN entries AS t ON t.logId = k.logId AND t.seq = k.headSeq
            """,
            logId.map { [.blob($0)] } ?? []
        )
        var statuses: [[UInt8]: LogStatus.Epoch] = [:]
        for row in rows {
            guard let state = epochState(record: try row.blob("record")) else { continue }
            let closed = try row.integer("headKind") == Int64(RecordKind.close.rawValue)
            statuses[try row.blob("logId")] = LogStatus.Epoch(state: state, closed: closed)
        }
        return statuses
    }

    /// Where a log's epochs stand up to its contiguous head (``epochStatuses(_:only:)``): nil for a version 1 log or
    /// one whose genesis is not held.
    public func epochStatus(logId: [UInt8]) async throws -> LogStatus.Epoch? {
        try await database.read { db in try Self.epochStatuses(db, only: logId)[logId] }
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
