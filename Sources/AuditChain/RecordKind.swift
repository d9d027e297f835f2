/// What an entry records (docs/FORMAT.md, "Record kinds"). Only events are encrypted.
public enum RecordKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The first entry of a log: binds log id, device id and the first keys.
    case genesis = 0
    /// A producer's event, AES-256-GCM encrypted.
    case event = 1
    /// Introduces new keys; signed by the outgoing signing key.
    case keyRotation = 2
    /// Entries left the delivery queue (or a copy of the log) by policy: reason, range, count, last hash.
    case accountedRemoval = 3
    /// Entries were deleted from the log by retention; same layout as an accounted removal.
    case retentionPrune = 4
    /// A signed statement of the head: the sequence number and hash of the entry before it.
    case checkpoint = 5
    /// Format version 2: ends an epoch, introduces the next epoch's keys; signed by the outgoing key.
    case epoch = 6
    /// Format version 2: the writer stopped cleanly.
    case close = 7
    /// Format version 2: the first record of a run whose previous run ended without a close record (a crash).
    case crashRecovery = 8
    /// Format version 2: a subject's keys were destroyed; lists their ids (docs/FORMAT.md, section 13.9).
    case erasure = 9
    /// Format version 2: a legal hold was set or cleared; no erasure while one is set.
    case legalHold = 10
    /// Format version 2: content keys of a subject left the device (an investigator's export).
    case subjectKeyExport = 11

    /// Whether the payload is AES-GCM ciphertext (true only for events).
    public var isEncrypted: Bool { self == .event }

    public var description: String {
        switch self {
        case .genesis: "genesis"
        case .event: "event"
        case .keyRotation: "keyRotation"
        case .accountedRemoval: "accountedRemoval"
        case .retentionPrune: "retentionPrune"
        case .checkpoint: "checkpoint"
        case .epoch: "epoch"
        case .close: "close"
        case .crashRecovery: "crashRecovery"
        case .erasure: "erasure"
        case .legalHold: "legalHold"
        case .subjectKeyExport: "subjectKeyExport"
        }
    }

    /// Whether entries of format `version` may have this kind: key rotations only in version 1, epoch, close and
    /// crash, erasure, hold and export records only in version 2 (docs/FORMAT.md, sections 6 and 13.2).
    public func exists(inVersion version: UInt8) -> Bool {
        switch self {
        case .keyRotation: version == FormatConstants.version
        case .epoch, .close, .crashRecovery, .erasure, .legalHold, .subjectKeyExport:
            version == FormatConstants.version2
        default: true
        }
    }
}
