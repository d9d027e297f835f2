extension ChainRules {
    /// Where a version 2 log's epochs stand, as its chain says (docs/FORMAT.md, section 13.3).
    public struct EpochState: Sendable, Hashable {
        /// The current epoch's number: 0 from the genesis, then one more per epoch record.
        public var number: UInt64
        /// When the current epoch began: the sealing time of the record that opened it.
        public var startsAt: AuditTimestamp
        /// The current epoch's scheduled length in seconds.
        public var epochSeconds: UInt64
        /// The seq of the record that opened the current epoch (0 for the genesis).
        public var recordSeq: UInt64
        /// The latest sealing time of an entry of the current epoch.
        public var latestTime: AuditTimestamp

        /// Creates an epoch state.
        public init(number: UInt64, startsAt: AuditTimestamp, epochSeconds: UInt64, recordSeq: UInt64) {
            self.number = number
            self.startsAt = startsAt
            self.epochSeconds = epochSeconds
            self.recordSeq = recordSeq
            self.latestTime = startsAt
        }

        /// The state after the epoch record `record` sealed at `header`.
        public func next(_ record: SystemRecord.Epoch, header: EntryHeader) -> EpochState {
            EpochState(
                number: record.epoch,
                startsAt: header.time,
                epochSeconds: record.epochSeconds,
                recordSeq: header.seq
            )
        }

        /// When the current epoch is due to end: its start plus its scheduled length.
        public var scheduledEnd: AuditTimestamp {
            let (end, overflow) = startsAt.millisecondsSinceEpoch.addingReportingOverflow(Int64(epochSeconds) * 1000)
            return AuditTimestamp(millisecondsSinceEpoch: overflow ? .max : end)
        }
    }

    /// Whether an entry of format `version` may follow one of `previousVersion` (nil: it is the first): a log moves
    /// from version 1 to version 2 once, by an epoch record (the upgrade), and never back (section 13.6).
    public static func version(_ header: EntryHeader, after previousVersion: UInt8?) -> Violation? {
        guard let previousVersion else { return nil }
        if header.version < previousVersion { return .versionGoesBack(seq: header.seq) }
        if header.version > previousVersion, header.kind != .epoch { return .upgradeNotEpoch(seq: header.seq) }
        return nil
    }

    /// What an epoch record must be (rule 1 of section 13.4): signed itself (its signature is what hands the log to
    /// the next key), the next number, a window that does not begin before the current one or before an entry of
    /// the current epoch (less the skew), and a key the record's signer is not.
    /// - Parameters:
    ///   - record: the epoch record.
    ///   - header: its header.
    ///   - state: the epochs so far; nil when the log is in version 1 until this record (the upgrade: epoch 1).
    public static func epoch(
        _ record: SystemRecord.Epoch,
        header: EntryHeader,
        after state: EpochState?
    ) -> Violation? {
        guard header.carriesSignature else { return .epochUnsigned(seq: header.seq) }
        let expected = state.map { $0.number == .max ? .max : $0.number + 1 } ?? 1
        guard record.epoch == expected else { return .epochOutOfOrder(found: record.epoch, expected: expected) }
        if let state {
            guard header.time >= state.startsAt else { return .epochGoesBack(startsAt: state.startsAt) }
            guard !startsBefore(header.time, state.latestTime) else {
                return .epochGoesBack(startsAt: state.latestTime)
            }
        }
        guard let key = introducedKey(.epoch(record)), KeyID.signing(key) != header.signingKeyId else {
            return .epochKeyNotFresh(seq: header.seq)
        }
        return nil
    }

    /// Whether an entry's sealing time lies inside its epoch's window, with the skew (rule 3 of section 13.4): not
    /// before the epoch began. (Its end is the next epoch record's time, which ``epoch(_:header:after:)`` checks.)
    public static func entryTime(_ header: EntryHeader, in state: EpochState) -> Violation? {
        startsBefore(header.time, state.startsAt)
            ? .timeOutsideEpoch(seq: header.seq, time: header.time, epoch: state.number, startsAt: state.startsAt)
            : nil
    }

    /// Whether `time` lies more than the skew before `reference`.
    static func startsBefore(_ time: AuditTimestamp, _ reference: AuditTimestamp) -> Bool {
        let (floor, overflow) = reference.millisecondsSinceEpoch.subtractingReportingOverflow(
            FormatConstants.epochTimeSkewMilliseconds
        )
        return !overflow && time.millisecondsSinceEpoch < floor
    }

    /// Whether a log whose current epoch is `state` and which is not closed has ended too long ago (rule 6 of
    /// section 13.4): its last epoch record more than two epoch lengths before `now`.
    public static func openEnd(_ state: EpochState, now: AuditTimestamp) -> Violation? {
        let (twice, overflow) = Int64(state.epochSeconds).multipliedReportingOverflow(by: 2000)
        let (limit, sumOverflow) = state.startsAt.millisecondsSinceEpoch.addingReportingOverflow(twice)
        guard !overflow, !sumOverflow, now.millisecondsSinceEpoch > limit else { return nil }
        return .staleEnd(epoch: state.number, startsAt: state.startsAt, epochSeconds: state.epochSeconds)
    }
}
