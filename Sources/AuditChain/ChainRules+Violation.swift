extension ChainRules {
    /// A rule of the chain an entry breaks. Its ``description`` is the one sentence every refusal of it uses: the
    /// verifier's finding, the collector's reason and the device's error.
    public enum Violation: Error, Sendable, Hashable, CustomStringConvertible {
        /// The entry belongs to another log than the entries before it (FORMAT.md, section 4).
        case otherLog(found: [UInt8], expected: [UInt8])
        /// The entry's seq is not the one after `previousSeq` (nil: the log is empty, and only seq 0 can begin it)
        /// (FORMAT.md, sections 1 and 4).
        case wrongSeq(seq: UInt64, previousSeq: UInt64?)
        /// The entry's `prevHash` is not the hash of the entry at `previousSeq` (FORMAT.md, section 4).
        case brokenLink(seq: UInt64, previousSeq: UInt64)
        /// A genesis record at another seq than 0 (FORMAT.md, section 8.3).
        case genesisNotAtZero(seq: UInt64)
        /// Another kind of record at seq 0 (FORMAT.md, section 8.3).
        case notGenesisAtZero(kind: RecordKind)
        /// The genesis's `prevHash` is not 32 zero bytes (FORMAT.md, sections 4 and 8.3).
        case genesisPrevHashNotZero
        /// The genesis states another log id than its header (FORMAT.md, section 8.3).
        case genesisOtherLog(stated: [UInt8], header: [UInt8])
        /// The genesis's signing public key is not an Ed25519 key with the key id its header names (FORMAT.md,
        /// section 8.3).
        case genesisKeyMismatch(keyId: KeyID)
        /// A checkpoint record states another head than the entry before it (FORMAT.md, section 8.3).
        case checkpointOtherHead
        /// A removal record accounts for entries at or after its own seq (FORMAT.md, section 8.3).
        case removalNotEarlier(recordSeq: UInt64, lastSeq: UInt64)
        /// Entries `from ... to` are missing and no removal record bridges them (FORMAT.md, section 10 step 6).
        case unaccountedGap(from: UInt64, to: UInt64)
        /// The entry is signed by a key that neither the log's genesis nor a rotation introduced (FORMAT.md,
        /// section 10 step 4).
        case unknownSigningKey(keyId: KeyID)
        /// The entry is signed by a key before the seq from which it may sign: the seq after the rotation that
        /// introduced it (FORMAT.md, section 10 step 4).
        case keyNotYetValid(keyId: KeyID, fromSeq: UInt64)
        /// The entry is signed by a key after the rotation that retired it (FORMAT.md, section 10 step 4).
        case keyRetired(keyId: KeyID, rotationSeq: UInt64)
        /// A version 1 entry after a version 2 one (FORMAT.md, section 13.6).
        case versionGoesBack(seq: UInt64)
        /// The first version 2 entry of a version 1 log is not an epoch record (FORMAT.md, section 13.6).
        case upgradeNotEpoch(seq: UInt64)
        /// An epoch record without a signature of its own (FORMAT.md, section 13.4 rule 1).
        case epochUnsigned(seq: UInt64)
        /// An epoch record whose number is not the next one (FORMAT.md, section 13.4 rule 1).
        case epochOutOfOrder(found: UInt64, expected: UInt64)
        /// An epoch record sealed before the current epoch began, or before one of its entries (FORMAT.md, section
        /// 13.4 rules 1 and 3).
        case epochGoesBack(startsAt: AuditTimestamp)
        /// An epoch record whose new key is the key that signs it (FORMAT.md, section 13.4 rule 1).
        case epochKeyNotFresh(seq: UInt64)
        /// An entry sealed before its epoch began, beyond the skew (FORMAT.md, section 13.4 rule 3).
        case timeOutsideEpoch(seq: UInt64, time: AuditTimestamp, epoch: UInt64, startsAt: AuditTimestamp)
        /// A log neither closed nor with an epoch record within two epoch lengths (FORMAT.md, section 13.4 rule 6).
        case staleEnd(epoch: UInt64, startsAt: AuditTimestamp, epochSeconds: UInt64)
        /// An event sealed under a content key that an earlier erasure record destroyed (FORMAT.md, section 13.9).
        case erasedKeyUsed(keyId: KeyID, erasureSeq: UInt64)
        /// An event with the subject flag that names the all-zero id or the active data key (FORMAT.md, 13.9).
        case subjectKeyNotOwn(keyId: KeyID)
        /// An erasure record sealed while the legal hold set at `holdSeq` is in force (FORMAT.md, section 13.9).
        case erasureUnderHold(holdSeq: UInt64)
        /// A hold set while another is in force, or a clear that does not name the hold in force (FORMAT.md, 13.9).
        case holdMismatch(stated: UInt64?, active: UInt64?)

        public var description: String {
            switch self {
            case .otherLog(let found, let expected):
                "the entry belongs to log \(Bytes.hex(found)), not \(Bytes.hex(expected))"
            case .wrongSeq(let seq, nil):
                "seq \(seq) cannot begin a log: its first entry is the genesis, at seq 0"
            case .wrongSeq(let seq, let previous?) where previous == .max:
                "seq \(seq) cannot follow seq \(previous): no sequence number is left after it"
            case .wrongSeq(let seq, let previous?):
                "seq \(seq) does not follow seq \(previous): the next entry is seq \(previous + 1)"
            case .brokenLink(let seq, let previous):
                "the entry at seq \(seq) does not link to the entry at seq \(previous): its previous hash is not "
                    + "that entry's hash"
            case .genesisNotAtZero(let seq):
                "a genesis record must be at seq 0, not at seq \(seq)"
            case .notGenesisAtZero(let kind):
                "seq 0 must be the genesis, not a \(kind) record"
            case .genesisPrevHashNotZero:
                "the genesis's previous hash must be all zero"
            case .genesisOtherLog(let stated, let header):
                "the genesis names log \(Bytes.hex(stated)), not its header's log \(Bytes.hex(header))"
            case .genesisKeyMismatch(let keyId):
                "the genesis's signing public key is not the key \(keyId) its header names"
            case .checkpointOtherHead:
                "a checkpoint record must state the seq and hash of the entry before it"
            case .removalNotEarlier(let recordSeq, let lastSeq):
                "a removal record must account for earlier entries only: the record at seq \(recordSeq) reaches seq "
                    + "\(lastSeq)"
            case .unaccountedGap(let from, let to):
                to == from
                    ? "1 entry is missing and no removal record accounts for it"
                    : "\(to - from + 1) entries are missing and no removal record accounts for them"
            case .unknownSigningKey(let keyId):
                "signed by key \(keyId), which is neither pinned nor introduced by this log's genesis or a rotation"
            case .keyNotYetValid(let keyId, let fromSeq):
                "signed by key \(keyId), which signs only from seq \(fromSeq), after the rotation that introduced it"
            case .keyRetired(let keyId, let rotationSeq):
                "signed by key \(keyId), which the key rotation at seq \(rotationSeq) retired"
            case .versionGoesBack(let seq):
                "the entry at seq \(seq) is in format version 1, after the log moved to version 2"
            case .upgradeNotEpoch(let seq):
                "the first format version 2 entry (seq \(seq)) must be an epoch record"
            case .epochUnsigned(let seq):
                "the epoch record at seq \(seq) carries no signature of its own"
            case .epochOutOfOrder(let found, let expected):
                "the epoch record opens epoch \(found), but the next epoch is \(expected)"
            case .epochGoesBack(let startsAt):
                "the epoch record is sealed before \(startsAt.rfc3339), which the current epoch already reached"
            case .epochKeyNotFresh(let seq):
                "the epoch record at seq \(seq) hands the log to the key that signs it, not to a fresh one"
            case .timeOutsideEpoch(let seq, let time, let epoch, let startsAt):
                "the entry at seq \(seq) is sealed at \(time.rfc3339), before its epoch \(epoch) began at "
                    + "\(startsAt.rfc3339)"
            case .staleEnd(let epoch, let startsAt, let seconds):
                "the log is not closed and its last epoch (\(epoch)) began at \(startsAt.rfc3339), more than two "
                    + "epoch lengths (\(seconds) s each) ago: its writer stopped without a close record, or its newest "
                    + "entries were cut; entries sealed after the last one here could be missing"
            case .erasedKeyUsed(let keyId, let erasureSeq):
                "the event is sealed under content key \(keyId), which the erasure record at seq \(erasureSeq) "
                    + "destroyed"
            case .subjectKeyNotOwn(let keyId):
                "an event sealed under a subject's key must name that key, not \(keyId) (the all-zero id or the data key)"
            case .erasureUnderHold(let holdSeq):
                "the erasure record is sealed while the legal hold set at seq \(holdSeq) is in force"
            case .holdMismatch(let stated?, let active):
                "the hold record clears the hold at seq \(stated), but "
                    + (active.map { "the hold in force was set at seq \($0)" } ?? "no hold is in force")
            case .holdMismatch(nil, let active):
                "the hold record sets a hold while the hold set at seq \(active.map(String.init) ?? "?") is in force"
            }
        }
    }
}
