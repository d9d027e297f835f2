/// The plaintext payloads of system records (docs/FORMAT.md, "System records"). They are not encrypted, so a
/// verifier holding only public keys can read them, and they are chained and signed like events.
public enum SystemRecord: Sendable, Hashable {
    /// The first entry: binds log id, device id and the first keys.
    case genesis(Genesis)
    /// New keys; signed by the outgoing key.
    case keyRotation(KeyRotation)
    /// Entries that left delivery, or a copy of the log, by policy.
    case accountedRemoval(Removal)
    /// Entries deleted from the log by retention.
    case retentionPrune(Removal)
    /// A signed head.
    case checkpoint(Checkpoint)
    /// Format version 2: the end of an epoch and the next epoch's keys; signed by the outgoing key.
    case epoch(Epoch)
    /// Format version 2: the writer stopped cleanly.
    case close(Marker)
    /// Format version 2: the previous run ended without a close record.
    case crashRecovery(Marker)
    /// Format version 2: a subject's keys were destroyed (docs/FORMAT.md, section 13.9).
    case erasure(Erasure)
    /// Format version 2: a legal hold was set or cleared.
    case legalHold(Hold)
    /// Format version 2: content keys of a subject left the device.
    case subjectKeyExport(KeyExport)

    /// Genesis payload.
    public struct Genesis: Sendable, Hashable {
        /// The log id (16 bytes).
        public var logId: [UInt8]
        /// The device the log belongs to.
        public var deviceId: String
        /// The first signing key (32 bytes, raw Ed25519).
        public var signingPublicKey: [UInt8]
        /// Id of the first data key.
        public var dataKeyId: KeyID
        /// When the log was created.
        public var createdAt: AuditTimestamp
        /// Format version 2 only: the scheduled length of an epoch in seconds (section 13.3); nil in version 1.
        public var epochSeconds: UInt64?
        /// Creates a genesis payload.
        public init(
            logId: [UInt8],
            deviceId: String,
            signingPublicKey: [UInt8],
            dataKeyId: KeyID,
            createdAt: AuditTimestamp,
            epochSeconds: UInt64? = nil
        ) {
            self.logId = logId
            self.deviceId = deviceId
            self.signingPublicKey = signingPublicKey
            self.dataKeyId = dataKeyId
            self.createdAt = createdAt
            self.epochSeconds = epochSeconds
        }
    }

    /// Epoch record payload (format version 2, docs/FORMAT.md section 13.3). The epoch it opens starts at the
    /// record's sealing time.
    public struct Epoch: Sendable, Hashable {
        /// The number of the epoch this record opens (the genesis opens epoch 0).
        public var epoch: UInt64
        /// The signing key of the new epoch (32 bytes, raw Ed25519); never one the log used before.
        public var newSigningPublicKey: [UInt8]
        /// The data key id of the events after this record.
        public var newDataKeyId: KeyID
        /// The scheduled length of the new epoch in seconds.
        public var epochSeconds: UInt64
        /// Why the epoch ended: `scheduled`, `rotation` (an operator's), `upgrade` (a version 1 log moving on), ...
        public var reason: String
        /// Creates an epoch payload.
        public init(
            epoch: UInt64,
            newSigningPublicKey: [UInt8],
            newDataKeyId: KeyID,
            epochSeconds: UInt64,
            reason: String
        ) {
            self.epoch = epoch
            self.newSigningPublicKey = newSigningPublicKey
            self.newDataKeyId = newDataKeyId
            self.epochSeconds = epochSeconds
            self.reason = reason
        }
    }

    /// Close and crash recovery payload (format version 2): why, in a word or a sentence.
    public struct Marker: Sendable, Hashable {
        /// Why the record was sealed.
        public var reason: String
        /// Creates a marker payload.
        public init(reason: String) {
            self.reason = reason
        }
    }

    /// Erasure payload (format version 2, docs/FORMAT.md section 13.9): the content key ids of one subject whose
    /// secret was destroyed. Never names the subject.
    public struct Erasure: Sendable, Hashable {
        /// The content key ids erased, one per data key generation, sorted and distinct (at least one).
        public var keyIds: [KeyID]
        /// Why (the request's reference, the legal ground).
        public var reason: String
        /// Who asked: the operator's given name, or `uid N` for the agent's socket; may be empty.
        public var requestedBy: String
        /// Creates an erasure payload; the ids are sorted and made distinct.
        public init(keyIds: [KeyID], reason: String, requestedBy: String) {
            self.keyIds = Array(Set(keyIds)).sorted { $0.hex < $1.hex }
            self.reason = reason
            self.requestedBy = requestedBy
        }
    }

    /// Legal hold payload (format version 2): `set` starts a hold, `clear` ends the hold set at `holdSeq`.
    public struct Hold: Sendable, Hashable {
        /// Whether the record sets a hold (else it clears one).
        public var isSet: Bool
        /// The seq of the hold record a clear ends; nil for a set.
        public var holdSeq: UInt64?
        /// Why.
        public var reason: String
        /// Creates a hold payload.
        public init(isSet: Bool, holdSeq: UInt64?, reason: String) {
            self.isSet = isSet
            self.holdSeq = isSet ? nil : holdSeq
            self.reason = reason
        }
    }

    /// Subject key export payload (format version 2): content keys that left the device, so that an erasure can
    /// say what it cannot reach.
    public struct KeyExport: Sendable, Hashable {
        /// The content key ids exported, sorted and distinct (at least one).
        public var keyIds: [KeyID]
        /// Why, and for whom.
        public var reason: String
        /// Creates an export payload; the ids are sorted and made distinct.
        public init(keyIds: [KeyID], reason: String) {
            self.keyIds = Array(Set(keyIds)).sorted { $0.hex < $1.hex }
            self.reason = reason
        }
    }

    /// Key rotation payload.
    public struct KeyRotation: Sendable, Hashable {
        /// The signing key of the entries after this one (may equal the current one).
        public var newSigningPublicKey: [UInt8]
        /// The data key id of the events after this one.
        public var newDataKeyId: KeyID
        /// Why the keys changed.
        public var reason: String
        /// Creates a rotation payload.
        public init(newSigningPublicKey: [UInt8], newDataKeyId: KeyID, reason: String) {
            self.newSigningPublicKey = newSigningPublicKey
            self.newDataKeyId = newDataKeyId
            self.reason = reason
        }
    }

    /// Accounted removal or retention pruning payload.
    public struct Removal: Sendable, Hashable {
        /// Why the entries left: `fifo`, `expired`, `dlqOverflow`, `rejected`, `purged`, `retention`, ...
        public var reason: String
        /// First sequence number of the range.
        public var firstSeq: UInt64
        /// Last sequence number of the range.
        public var lastSeq: UInt64
        /// How many entries of the range left (equal to the range's size when it is contiguous).
        public var count: UInt64
        /// Entry hash of the entry at `lastSeq`, so the next present entry can be linked across the gap.
        public var lastRemovedHash: [UInt8]
        /// Free text: the backend's reason for a rejection, the operator's for a purge.
        public var detail: String
        /// Creates a removal payload.
        public init(
            reason: String,
            firstSeq: UInt64,
            lastSeq: UInt64,
            count: UInt64,
            lastRemovedHash: [UInt8],
            detail: String = ""
        ) {
            self.reason = reason
            self.firstSeq = firstSeq
            self.lastSeq = lastSeq
            self.count = count
            self.lastRemovedHash = lastRemovedHash
            self.detail = detail
        }
    }

    /// Checkpoint payload: the head just before the checkpoint entry.
    public struct Checkpoint: Sendable, Hashable {
        /// Sequence number of the head.
        public var headSeq: UInt64
        /// Entry hash of the head.
        public var headHash: [UInt8]
        /// Creates a checkpoint payload.
        public init(headSeq: UInt64, headHash: [UInt8]) {
            self.headSeq = headSeq
            self.headHash = headHash
        }
    }

    /// The payload layout version (`v`).
    public static let version: Int64 = 1
    /// The most key ids an erasure or export record may list.
    public static let maxKeyIds = 4096
    /// The longest epoch a record may state: a year, in seconds.
    public static let maxEpochSeconds: UInt64 = 31_536_000

    /// The canonical JSON bytes of the payload.
    public var canonicalPayload: [UInt8] {
        var members: [String: JSONValue] = ["v": .integer(Self.version)]
        switch self {
        case .genesis(let genesis):
            members["logId"] = .string(Bytes.hex(genesis.logId))
            members["deviceId"] = .string(genesis.deviceId)
            members["signingPublicKey"] = .string(Bytes.hex(genesis.signingPublicKey))
            members["dataKeyId"] = .string(genesis.dataKeyId.hex)
            members["createdAt"] = .string(genesis.createdAt.rfc3339)
            if let seconds = genesis.epochSeconds { members["epochSeconds"] = .integer(Int64(seconds)) }
        case .keyRotation(let rotation):
            members["newSigningPublicKey"] = .string(Bytes.hex(rotation.newSigningPublicKey))
            members["newDataKeyId"] = .string(rotation.newDataKeyId.hex)
            members["reason"] = .string(rotation.reason)
        case .accountedRemoval(let removal), .retentionPrune(let removal):
            members["reason"] = .string(removal.reason)
            members["firstSeq"] = .integer(Int64(removal.firstSeq))
            members["lastSeq"] = .integer(Int64(removal.lastSeq))
            members["count"] = .integer(Int64(removal.count))
            members["lastRemovedHash"] = .string(Bytes.hex(removal.lastRemovedHash))
            members["detail"] = .string(removal.detail)
        case .checkpoint(let checkpoint):
            members["headSeq"] = .integer(Int64(checkpoint.headSeq))
            members["headHash"] = .string(Bytes.hex(checkpoint.headHash))
        case .epoch(let epoch):
            members["epoch"] = .integer(Int64(epoch.epoch))
            members["newSigningPublicKey"] = .string(Bytes.hex(epoch.newSigningPublicKey))
            members["newDataKeyId"] = .string(epoch.newDataKeyId.hex)
            members["epochSeconds"] = .integer(Int64(epoch.epochSeconds))
            members["reason"] = .string(epoch.reason)
        case .close(let marker), .crashRecovery(let marker):
            members["reason"] = .string(marker.reason)
        case .erasure(let erasure):
            members["keyIds"] = .array(erasure.keyIds.map { .string($0.hex) })
            members["reason"] = .string(erasure.reason)
            members["requestedBy"] = .string(erasure.requestedBy)
        case .legalHold(let hold):
            members["action"] = .string(hold.isSet ? "set" : "clear")
            if let seq = hold.holdSeq { members["holdSeq"] = .integer(Int64(seq)) }
            members["reason"] = .string(hold.reason)
        case .subjectKeyExport(let export):
            members["keyIds"] = .array(export.keyIds.map { .string($0.hex) })
            members["reason"] = .string(export.reason)
        }
        return JSONValue.object(members).canonicalBytes
    }

    /// Decodes the payload of a system record of the given kind.
    /// - Throws: ``AuditChainError`` (``AuditChainError/Code/malformedRecord``) naming the member that is wrong.
    public init(kind: RecordKind, payload: [UInt8]) throws(AuditChainError) {
        let fields = try RecordFields(kind: kind, payload: payload)
        switch kind {
        case .genesis:
            self = .genesis(
                Genesis(
                    logId: try fields.hex("logId", size: FormatConstants.logIdSize),
                    deviceId: try fields.string("deviceId"),
                    signingPublicKey: try fields.hex("signingPublicKey", size: FormatConstants.publicKeySize),
                    dataKeyId: KeyID(unchecked: try fields.hex("dataKeyId", size: FormatConstants.keyIdSize)),
                    createdAt: try fields.timestamp("createdAt"),
                    epochSeconds: fields.members["epochSeconds"] == nil ? nil : try fields.epochSeconds()
                )
            )
            try fields.expectOnly(["logId", "deviceId", "signingPublicKey", "dataKeyId", "createdAt", "epochSeconds"])
        case .keyRotation:
            self = .keyRotation(
                KeyRotation(
                    newSigningPublicKey: try fields.hex("newSigningPublicKey", size: FormatConstants.publicKeySize),
                    newDataKeyId: KeyID(unchecked: try fields.hex("newDataKeyId", size: FormatConstants.keyIdSize)),
                    reason: try fields.string("reason")
                )
            )
            try fields.expectOnly(["newSigningPublicKey", "newDataKeyId", "reason"])
        case .accountedRemoval, .retentionPrune:
            let removal = Removal(
                reason: try fields.string("reason"),
                firstSeq: try fields.unsigned("firstSeq"),
                lastSeq: try fields.unsigned("lastSeq"),
                count: try fields.unsigned("count"),
                lastRemovedHash: try fields.hex("lastRemovedHash", size: FormatConstants.hashSize),
                detail: try fields.string("detail")
            )
            guard removal.firstSeq <= removal.lastSeq, removal.count >= 1,
                removal.count <= removal.lastSeq - removal.firstSeq + 1
            else {
                throw AuditChainError(.malformedRecord, "\(kind) record: count and range do not agree")
            }
            // Retention removes a prefix after the genesis and states the cumulative range (docs/FORMAT.md, 8.3).
            guard kind != .retentionPrune || removal.firstSeq == 1 else {
                throw AuditChainError(.malformedRecord, "\(kind) record: the pruned range must start at seq 1")
            }
            try fields.expectOnly(["reason", "firstSeq", "lastSeq", "count", "lastRemovedHash", "detail"])
            self = kind == .retentionPrune ? .retentionPrune(removal) : .accountedRemoval(removal)
        case .checkpoint:
            self = .checkpoint(
                Checkpoint(
                    headSeq: try fields.unsigned("headSeq"),
                    headHash: try fields.hex("headHash", size: FormatConstants.hashSize)
                )
            )
            try fields.expectOnly(["headSeq", "headHash"])
        case .epoch:
            let epoch = Epoch(
                epoch: try fields.unsigned("epoch"),
                newSigningPublicKey: try fields.hex("newSigningPublicKey", size: FormatConstants.publicKeySize),
                newDataKeyId: KeyID(unchecked: try fields.hex("newDataKeyId", size: FormatConstants.keyIdSize)),
                epochSeconds: try fields.epochSeconds(),
                reason: try fields.string("reason")
            )
            guard epoch.epoch >= 1 else { throw fields.fail("epoch", "must be at least 1 (the genesis opens epoch 0)") }
            try fields.expectOnly(["epoch", "newSigningPublicKey", "newDataKeyId", "epochSeconds", "reason"])
            self = .epoch(epoch)
        case .close, .crashRecovery:
            let marker = Marker(reason: try fields.string("reason"))
            try fields.expectOnly(["reason"])
            self = kind == .close ? .close(marker) : .crashRecovery(marker)
        case .erasure:
            self = .erasure(
                Erasure(
                    keyIds: try fields.keyIds("keyIds"),
                    reason: try fields.string("reason"),
                    requestedBy: try fields.string("requestedBy")
                )
            )
            try fields.expectOnly(["keyIds", "reason", "requestedBy"])
        case .legalHold:
            let action = try fields.string("action")
            guard action == "set" || action == "clear" else { throw fields.fail("action", "must be set or clear") }
            let isSet = action == "set"
            guard isSet == (fields.members["holdSeq"] == nil) else {
                throw fields.fail("holdSeq", "is required by a clear and forbidden in a set")
            }
            let hold = Hold(
                isSet: isSet,
                holdSeq: isSet ? nil : try fields.unsigned("holdSeq"),
                reason: try fields.string("reason")
            )
            try fields.expectOnly(["action", "holdSeq", "reason"])
            self = .legalHold(hold)
        case .subjectKeyExport:
            self = .subjectKeyExport(
                KeyExport(keyIds: try fields.keyIds("keyIds"), reason: try fields.string("reason"))
            )
            try fields.expectOnly(["keyIds", "reason"])
        case .event:
            throw AuditChainError(.malformedRecord, "an event is not a system record")
        }
    }

    /// The record kind this payload is sealed under.
    public var kind: RecordKind {
        switch self {
        case .genesis: .genesis
        case .keyRotation: .keyRotation
        case .accountedRemoval: .accountedRemoval
        case .retentionPrune: .retentionPrune
        case .checkpoint: .checkpoint
        case .epoch: .epoch
        case .close: .close
        case .crashRecovery: .crashRecovery
        case .erasure: .erasure
        case .legalHold: .legalHold
        case .subjectKeyExport: .subjectKeyExport
        }
    }
}

/// Typed access to the members of a system record payload.
private struct RecordFields {
    let kind: RecordKind
    let members: [String: JSONValue]

    init(kind: RecordKind, payload: [UInt8]) throws(AuditChainError) {
        self.kind = kind
        guard let (value, isCanonical) = try? JSONValue.parsingCanonically(payload), case .object(let members) = value
        else {
            throw AuditChainError(.malformedRecord, "\(kind) record: payload is not a JSON object")
        }
        guard members["v"] == .integer(SystemRecord.version) else {
            throw AuditChainError(.malformedRecord, "\(kind) record: unsupported payload version")
        }
        guard isCanonical else {
            throw AuditChainError(.malformedRecord, "\(kind) record: payload is not in canonical form")
        }
        self.members = members
    }

    func fail(_ name: String, _ what: String) -> AuditChainError {
        AuditChainError(.malformedRecord, "\(kind) record: member \"\(name)\" \(what)")
    }

    func string(_ name: String) throws(AuditChainError) -> String {
        guard let text = members[name]?.stringValue else { throw fail(name, "must be a string") }
        return text
    }

    func hex(_ name: String, size: Int) throws(AuditChainError) -> [UInt8] {
        let text = try string(name)
        guard let bytes = Bytes.unhex(text), bytes.count == size, text == Bytes.hex(bytes) else {
            throw fail(name, "must be \(size * 2) lowercase hexadecimal digits")
        }
        return bytes
    }

    func unsigned(_ name: String) throws(AuditChainError) -> UInt64 {
        guard let number = members[name]?.integerValue, number >= 0 else {
            throw fail(name, "must be a non-negative integer")
        }
        return UInt64(number)
    }

    func timestamp(_ name: String) throws(AuditChainError) -> AuditTimestamp {
        let text = try string(name)
        guard let stamp = AuditTimestamp(rfc3339: text), stamp.rfc3339 == text else {
            throw fail(name, "must be an RFC 3339 time in canonical form")
        }
        return stamp
    }

    /// A list of key ids: 1 to 4096 distinct ids of 32 lowercase hexadecimal digits, in ascending order.
    func keyIds(_ name: String) throws(AuditChainError) -> [KeyID] {
        guard case .array(let items)? = members[name], (1...SystemRecord.maxKeyIds).contains(items.count) else {
            throw fail(name, "must be an array of 1 to \(SystemRecord.maxKeyIds) key ids")
        }
        var ids: [KeyID] = []
        for item in items {
            guard let text = item.stringValue, let bytes = Bytes.unhex(text), bytes.count == FormatConstants.keyIdSize,
                text == Bytes.hex(bytes), ids.last.map({ $0.hex < text }) ?? true
            else { throw fail(name, "must hold distinct key ids of 32 lowercase hexadecimal digits, ascending") }
            ids.append(KeyID(unchecked: bytes))
        }
        return ids
    }

    /// An epoch length in seconds: 1 to 31 536 000 (a year).
    func epochSeconds() throws(AuditChainError) -> UInt64 {
        let seconds = try unsigned("epochSeconds")
        guard (1...SystemRecord.maxEpochSeconds).contains(seconds) else {
            throw fail("epochSeconds", "must be between 1 and \(SystemRecord.maxEpochSeconds)")
        }
        return seconds
    }

    func expectOnly(_ names: Set<String>) throws(AuditChainError) {
        if let extra = members.keys.sorted().first(where: { $0 != "v" && !names.contains($0) }) {
            throw fail(extra, "is not part of the layout")
        }
    }
}
