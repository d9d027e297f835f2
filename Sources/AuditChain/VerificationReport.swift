/// What a verification found: every problem with its sequence number and kind, and every accounted removal.
public struct VerificationReport: Sendable, Hashable {
    /// A problem the verifier found.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// The kinds of problem (stable names, used in JSON output).
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// The signed part of the entry (header or its payload digest) was altered.
            case headerModified
            /// The nonce or payload bytes were altered (the signed digest no longer matches).
            case payloadModified
            /// The signature does not verify although the entry's content is intact.
            case signatureInvalid
            /// Two individually valid entries do not link (a splice, a fork, or an entry from another log).
            case linkBroken
            /// Entries are missing and no system record accounts for them.
            case missing
            /// An entry appears out of sequence order.
            case reordered
            /// A sequence number appears twice.
            case duplicate
            /// The entry is signed by a key that is neither pinned nor introduced by a rotation, or is retired.
            case unknownKey
            /// The log ends before the trusted checkpoint.
            case truncated
            /// The entry at the trusted checkpoint's sequence number has another hash (or the checkpoint is bad).
            case checkpointMismatch
            /// AES-GCM refused to open the payload with the data key, or no data key has its id.
            case payloadUndecryptable
            /// The payload opened (or is a system record) but does not follow its layout or the catalogue.
            case payloadInvalid
            /// The entry bytes do not follow the entry layout at all.
            case malformed
            /// The storage files an authentic entry under another sequence number than its own (a database row's
            /// key or a bundle line's `seq` was changed); the entry itself is checked as usual.
            case misfiled
            /// A copy of a header field the storage keeps beside the entry (the SQLite log's `hash`, `kind` or
            /// `time` column) disagrees with the entry bytes; the entry itself is checked as usual.
            case lookupMismatch
            /// Format version 2: the epoch chain is broken (an epoch record out of number, unsigned, going back in
            /// time or reusing a key), or an entry's sealing time lies outside its epoch's window.
            case epochInvalid
            /// Format version 2: two different entries (or epoch records) signed under one key for one place: the
            /// key is compromised; both are evidence.
            case equivocation
            /// Format version 2: an entry no valid signature covers (after the last signature of the log, or before
            /// an entry that breaks the chain to the next signature).
            case unsealed
            /// Format version 2: the log is neither closed nor has an epoch record within two epoch lengths of the
            /// time of verification: its writer crashed, or its tail was cut.
            case openEnd
            /// Format version 2: a subject rule is broken (docs/FORMAT.md, section 13.9): an event under a key an
            /// erasure destroyed, an erasure while a legal hold is in force, a hold record that does not match.
            case erasureInvalid
        }

        /// The sequence number the problem is at (the first of a range).
        public var seq: UInt64
        /// The last sequence number of a range (`missing`, `truncated`), else equal to ``seq``.
        public var lastSeq: UInt64
        /// The kind.
        public var kind: Kind
        /// A readable explanation; never holds decrypted content.
        public var detail: String

        /// Creates a finding.
        public init(seq: UInt64, lastSeq: UInt64? = nil, kind: Kind, detail: String) {
            self.seq = seq
            self.lastSeq = lastSeq ?? seq
            self.kind = kind
            self.detail = detail
        }

        public var description: String {
            let place = lastSeq == seq ? "seq \(seq)" : "seq \(seq)-\(lastSeq)"
            return "\(place): \(kind.rawValue): \(detail)"
        }
    }

    /// A removal recorded in the chain (policy, not tampering).
    public struct AccountedRemoval: Sendable, Hashable {
        /// Sequence number of the system record.
        public var recordSeq: UInt64
        /// The record kind (accounted removal or retention prune).
        public var kind: RecordKind
        /// What the record says.
        public var removal: SystemRecord.Removal
        /// Whether it bridged a gap of this copy of the log.
        public var bridgedGap: Bool
    }

    /// An erasure recorded in the chain (docs/FORMAT.md, section 13.9): not damage.
    public struct Erasure: Sendable, Hashable {
        /// Sequence number of the erasure record.
        public var recordSeq: UInt64
        /// The content key ids it destroyed.
        public var keyIds: [KeyID]
        /// How many events of this copy before the record were sealed under those keys.
        public var entriesErased: Int
        /// The reason it states.
        public var reason: String
        /// Who asked, as it states.
        public var requestedBy: String
        /// The export records that listed one of its keys before it: copies erasure cannot reach.
        public var exportSeqs: [UInt64]
        /// Creates an erasure.
        public init(
            recordSeq: UInt64,
            keyIds: [KeyID],
            entriesErased: Int,
            reason: String,
            requestedBy: String,
            exportSeqs: [UInt64]
        ) {
            self.recordSeq = recordSeq
            self.keyIds = keyIds
            self.entriesErased = entriesErased
            self.reason = reason
            self.requestedBy = requestedBy
            self.exportSeqs = exportSeqs
        }

        /// The JSON form: `auditctl erase --json`, `verify --json`'s `erasures`, the agent socket's answer.
        public var json: JSONValue {
            .object([
                "recordSeq": .unsigned(recordSeq),
                "entriesErased": .integer(Int64(entriesErased)),
                "keyIds": .array(keyIds.map { .string($0.hex) }),
                "reason": .string(reason),
                "requestedBy": .string(requestedBy),
                "exportSeqs": .array(exportSeqs.map { .unsigned($0) }),
            ])
        }
    }

    /// The problems, ordered by sequence number. Empty means the log verified.
    public var problems: [Finding] = []
    /// Removals the chain accounts for.
    public var accounted: [AccountedRemoval] = []
    /// Entries read.
    public var entriesChecked: Int = 0
    /// Signatures verified (fewer than entries in fast mode).
    public var signaturesChecked: Int = 0
    /// Payloads opened with a data key.
    public var payloadsOpened: Int = 0
    /// The log id, as the first intact entry states it.
    public var logId: [UInt8]?
    /// The last sequence number and hash of the chain as read.
    public var head: ChainHead?
    /// Whether the fast mode was used.
    public var fast: Bool = false
    /// The highest format version among the entries read (1 or 2); 0 when none was read.
    public var formatVersion: UInt8 = 0
    /// Format version 2: the epochs the chain holds (the genesis's epoch 0 and one per epoch record); 0 in version 1.
    public var epochs: Int = 0
    /// Format version 2: when the current epoch began (its epoch record's sealing time, or the genesis's).
    public var lastEpochTime: AuditTimestamp?
    /// Format version 2: whether the last entry is a close record.
    public var closed: Bool = false
    /// Format version 2: the entries after the last valid signature.
    public var unsealedTail: Int = 0
    /// Format version 2: the erasures the chain records, in order.
    public var erasures: [Erasure] = []
    /// Format version 2: the seq of the hold record whose legal hold is in force at the end, or nil.
    public var activeHoldSeq: UInt64?

    /// True when no problem was found.
    public var isClean: Bool { problems.isEmpty }
}
