public import AuditChain
import AuditWire
public import Crypto

/// An entry the collector holds, as far as de-duplication and linking need it.
public struct HeldEntry: Sendable, Hashable {
    /// Its sequence number.
    public var seq: UInt64
    /// Its entry hash (docs/FORMAT.md section 5).
    public var entryHash: [UInt8]
    /// The `prevHash` of its header.
    public var prevHash: [UInt8]
    /// The serialized entry.
    public var bytes: [UInt8]
    /// Its record kind.
    public var kind: RecordKind

    /// Creates a held entry.
    public init(seq: UInt64, entryHash: [UInt8], prevHash: [UInt8], bytes: [UInt8], kind: RecordKind) {
        self.seq = seq
        self.entryHash = entryHash
        self.prevHash = prevHash
        self.bytes = bytes
        self.kind = kind
    }
}

/// A signing key the collector accepts for one log, and the sequence numbers it may sign.
public struct KeyGrant: Sendable, Hashable {
    /// The Ed25519 public key.
    public var publicKey: Curve25519.Signing.PublicKey
    /// First sequence number it may sign (0 for the genesis key, rotation seq + 1 for a rotated-in key).
    public var fromSeq: UInt64
    /// Last sequence number it may sign: the seq of the rotation that retired it; nil while it is active.
    public var untilSeq: UInt64?

    /// Creates a grant.
    public init(publicKey: Curve25519.Signing.PublicKey, fromSeq: UInt64, untilSeq: UInt64? = nil) {
        self.publicKey = publicKey
        self.fromSeq = fromSeq
        self.untilSeq = untilSeq
    }

    /// Where the key may sign (``ChainRules/KeyWindow``).
    public var window: ChainRules.KeyWindow { ChainRules.KeyWindow(fromSeq: fromSeq, untilSeq: untilSeq) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.publicKey.rawRepresentation == rhs.publicKey.rawRepresentation && lhs.fromSeq == rhs.fromSeq
            && lhs.untilSeq == rhs.untilSeq
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(publicKey.rawRepresentation)
        hasher.combine(fromSeq)
        hasher.combine(untilSeq)
    }
}

/// The range an accounted-removal or retention-prune record held by the collector accounts for.
public struct RemovalSpan: Sendable, Hashable, RemovalRange {
    /// Sequence number of the removal record itself.
    public var recordSeq: UInt64
    /// First sequence number of the range.
    public var firstSeq: UInt64
    /// Last sequence number of the range.
    public var lastSeq: UInt64
    /// How many entries of the range were removed.
    public var count: UInt64
    /// Entry hash of the entry at `lastSeq`.
    public var lastRemovedHash: [UInt8]

    /// Creates a span.
    public init(recordSeq: UInt64, firstSeq: UInt64, lastSeq: UInt64, count: UInt64, lastRemovedHash: [UInt8]) {
        self.recordSeq = recordSeq
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.count = count
        self.lastRemovedHash = lastRemovedHash
    }

    /// The span of a removal record at `recordSeq`.
    public init(recordSeq: UInt64, removal: SystemRecord.Removal) {
        self.init(
            recordSeq: recordSeq,
            firstSeq: removal.firstSeq,
            lastSeq: removal.lastSeq,
            count: removal.count,
            lastRemovedHash: removal.lastRemovedHash
        )
    }
}

/// A correctly signed entry the collector refused because it contradicts what it holds.
public struct CollectorIncident: Sendable, Hashable {
    /// What kind of contradiction.
    public enum Kind: String, Sendable, Hashable {
        /// Same log and seq as a held entry, different bytes.
        case fork
        /// Does not link to a held neighbour.
        case chainBreak
        /// A correctly signed device checkpoint names another entry than the one held at its seq.
        case checkpointConflict
    }

    /// What kind.
    public var kind: Kind
    /// The entry's sequence number.
    public var seq: UInt64
    /// The refused entry's hash.
    public var entryHash: [UInt8]
    /// The refused entry's bytes.
    public var bytes: [UInt8]
    /// Why it was refused.
    public var reason: String

    /// Creates an incident.
    public init(kind: Kind, seq: UInt64, entryHash: [UInt8], bytes: [UInt8], reason: String) {
        self.kind = kind
        self.seq = seq
        self.entryHash = entryHash
        self.bytes = bytes
        self.reason = reason
    }
}

/// What the decision over a batch asks the store to do.
struct IngestPlan: Sendable {
    /// One result per batch entry, in batch order.
    var results: [SyncEntryResult] = []
    /// Entries to store.
    var accepted: [HeldEntry] = []
    /// Forks and chain breaks to record.
    var incidents: [CollectorIncident] = []
    /// Keys learned or retired, by id.
    var keyGrants: [KeyID: KeyGrant] = [:]
    /// Removal records stored.
    var removals: [RemovalSpan] = []
}
