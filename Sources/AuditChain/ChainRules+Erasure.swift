extension ChainRules {
    /// What a verifier tracks for the subject rules of format version 2 (docs/FORMAT.md, section 13.9): the events
    /// under each subject content key, the keys erasure records destroyed, the keys that left the device, and the
    /// legal hold in force. One home for those rules: the chain verifier and the device's reader use it.
    public struct SubjectLedger: Sendable {
        /// How many authentic events each content key id sealed so far.
        public private(set) var eventsByKey: [KeyID: Int] = [:]
        /// The seq of the erasure record that destroyed each key id.
        public private(set) var erasedBy: [KeyID: UInt64] = [:]
        /// The seqs of the export records that listed each key id.
        public private(set) var exportedBy: [KeyID: [UInt64]] = [:]
        /// The seq of the hold record whose hold is in force, or nil.
        public private(set) var activeHold: UInt64?
        /// Subject events that could not be opened (no key was given), by key id: an erasure record explains them.
        private var unopened: [KeyID: [UInt64]] = [:]

        /// An empty ledger.
        public init() {}

        /// The header rule of an event with the subject flag: it names a key of its own (not the all-zero id nor
        /// the active data key), and not a key an earlier erasure destroyed.
        public func subjectEventProblem(_ header: EntryHeader, activeDataKey: KeyID?) -> Violation? {
            if header.dataKeyId == KeyID.none || header.dataKeyId == activeDataKey {
                return .subjectKeyNotOwn(keyId: header.dataKeyId)
            }
            if let seq = erasedBy[header.dataKeyId] { return .erasedKeyUsed(keyId: header.dataKeyId, erasureSeq: seq) }
            return nil
        }

        /// Counts an authentic subject event.
        public mutating func noteEvent(_ header: EntryHeader) {
            eventsByKey[header.dataKeyId, default: 0] += 1
        }

        /// Notes a subject event the verifier holds no key for; an erasure record listing its key explains it.
        public mutating func noteUnopened(_ header: EntryHeader) {
            unopened[header.dataKeyId, default: []].append(header.seq)
        }

        /// The subject events no erasure explained, by seq, with their key ids: `payloadUndecryptable`.
        public var unexplained: [(seq: UInt64, keyId: KeyID)] {
            unopened.flatMap { id, seqs in seqs.map { (seq: $0, keyId: id) } }.sorted { $0.seq < $1.seq }
        }

        /// Reads an authentic erasure record: its keys are destroyed from its seq on, the events under them so far
        /// are erased, and a hold in force makes it a violation (it is an erasure all the same: the keys are gone).
        public mutating func erase(
            _ record: SystemRecord.Erasure,
            seq: UInt64
        ) -> (
            VerificationReport.Erasure, Violation?
        ) {
            var entries = 0
            var exports: Set<UInt64> = []
            for id in record.keyIds where erasedBy[id] == nil {
                erasedBy[id] = seq
                entries += eventsByKey[id] ?? 0
                unopened.removeValue(forKey: id)
                exports.formUnion(exportedBy[id] ?? [])
            }
            let erasure = VerificationReport.Erasure(
                recordSeq: seq,
                keyIds: record.keyIds,
                entriesErased: entries,
                reason: record.reason,
                requestedBy: record.requestedBy,
                exportSeqs: exports.sorted()
            )
            return (erasure, activeHold.map { .erasureUnderHold(holdSeq: $0) })
        }

        /// Reads an authentic hold record: a set while none is in force, a clear naming the hold in force.
        public mutating func hold(_ record: SystemRecord.Hold, seq: UInt64) -> Violation? {
            if record.isSet {
                defer { activeHold = seq }
                return activeHold.map { .holdMismatch(stated: nil, active: $0) }
            }
            guard record.holdSeq == activeHold else { return .holdMismatch(stated: record.holdSeq, active: activeHold) }
            activeHold = nil
            return nil
        }

        /// Reads an authentic export record.
        public mutating func export(_ record: SystemRecord.KeyExport, seq: UInt64) {
            for id in record.keyIds { exportedBy[id, default: []].append(seq) }
        }
    }
}
