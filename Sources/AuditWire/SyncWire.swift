public import AuditChain
public import Crypto
import Foundation

/// The JSON messages of the sync protocol (docs/PROTOCOL.md), shared by the agent and the collector.
public enum SyncWire: Sendable {
    /// The protocol version carried as `"v"` in the messages that have one version only (the collector key), and
    /// in version 1 batches and answers.
    public static let version: Int64 = 1
    /// The ingest version whose receipt is a signed checkpoint with Merkle proofs (docs/PROTOCOL.md section 3.2),
    /// which agents send. A collector answers each batch in the batch's version.
    public static let treeVersion: Int64 = 2
    /// Largest number of hashes in a proof of a receipt: a tree of 2^64 leaves needs 64 (consistency 65).
    public static let maxProofHashes = 65
    /// The path of the ingest endpoint.
    public static let eventsPath = "/v1/audit/events"
    /// Largest request body the reference collector takes (bytes); larger requests get 413.
    public static let maxRequestBytes = 8 << 20
    /// Largest number of entries in one batch; more gets 413.
    public static let maxBatchEntries = 5000
    /// Domain-separation prefix of receipt signatures.
    public static let receiptDomain: [UInt8] = Array("audit-chain/v1/receipt".utf8)

    /// The idempotency key of one entry: lowercase hex log id, `-`, decimal sequence number.
    public static func idempotencyKey(logId: [UInt8], seq: UInt64) -> String {
        "\(Hex.encode(logId))-\(seq)"
    }

    /// The idempotency key of a batch: hex SHA-256 over the log id and the serialized entries of the batch, in
    /// order. The same entries always give the same key, so a retried batch is recognisable as such.
    public static func batchKey(logId: [UInt8], entries: [[UInt8]]) -> String {
        var hasher = SHA256()
        hasher.update(data: logId)
        for bytes in entries { hasher.update(data: bytes) }
        return Hex.encode(Array(hasher.finalize()))
    }

    /// An error in a message, naming the member.
    public struct DecodingError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
        init(_ description: String) { self.description = description }
    }
}

/// One entry of a batch.
public struct SyncEntry: Sendable, Hashable {
    /// Its sequence number (also in its header).
    public var seq: UInt64
    /// The serialized entry exactly as in docs/FORMAT.md section 5.
    public var bytes: [UInt8]

    /// Creates a batch entry.
    public init(seq: UInt64, bytes: [UInt8]) {
        self.seq = seq
        self.bytes = bytes
    }
}

/// `POST /v1/audit/events` body: entries of one log in ascending sequence order, plus the latest checkpoint.
public struct SyncBatch: Sendable, Hashable {
    /// The log the entries belong to (16 bytes).
    public var logId: [UInt8]
    /// The batch idempotency key (``SyncWire/batchKey(logId:entries:)``).
    public var batchId: String
    /// The entries.
    public var entries: [SyncEntry]
    /// The agent's latest detached checkpoint, if it has one.
    public var checkpoint: SignedCheckpoint?
    /// The protocol version: 1 (JSON receipts) or 2 (``SyncWire/treeVersion``: checkpoint receipts).
    public var version: Int64
    /// Version 2: the size of the collector's tree in the last checkpoint the agent verified (nil: none), for the
    /// consistency proof the answer carries from it.
    public var treeSize: UInt64?

    /// Creates a batch.
    public init(
        logId: [UInt8],
        batchId: String,
        entries: [SyncEntry],
        checkpoint: SignedCheckpoint?,
        version: Int64 = SyncWire.treeVersion,
        treeSize: UInt64? = nil
    ) {
        self.logId = logId
        self.batchId = batchId
        self.entries = entries
        self.checkpoint = checkpoint
        self.version = version
        self.treeSize = version == SyncWire.treeVersion ? treeSize : nil
    }

    /// The JSON body.
    public var json: JSONValue {
        let logHex = Hex.encode(logId)
        var members: [String: JSONValue] = [
            "v": .integer(version),
            "logId": .string(logHex),
            "batchId": .string(batchId),
            "entries": .array(
                entries.map { entry in
                    .object([
                        "seq": .unsigned(entry.seq),
                        "idempotencyKey": .string("\(logHex)-\(entry.seq)"),
                        "entry": .string(Data(entry.bytes).base64EncodedString()),
                    ])
                }
            ),
        ]
        members["checkpoint"] = checkpoint?.json ?? .null
        if version == SyncWire.treeVersion { members["treeSize"] = treeSize.map { .unsigned($0) } ?? .null }
        return .object(members)
    }

    /// Reads a body.
    /// - Throws: ``SyncWire/DecodingError`` naming the member that is wrong.
    public init(json value: JSONValue) throws(SyncWire.DecodingError) {
        guard let members = value.objectValue else { throw .init("the body is not a JSON object") }
        guard let version = members["v"]?.integerValue, version == SyncWire.version || version == SyncWire.treeVersion
        else { throw .init("member \"v\" must be 1 or 2") }
        var treeSize: UInt64?
        if version == SyncWire.treeVersion, let value = members["treeSize"], value != .null {
            guard let size = value.integerValue, size >= 0 else {
                throw .init("member \"treeSize\" must be a non-negative integer or null")
            }
            treeSize = UInt64(size)
        }
        guard let logHex = members["logId"]?.stringValue, let logId = Hex.decode(logHex),
            logId.count == FormatConstants.logIdSize
        else { throw .init("member \"logId\" must be 32 hex digits") }
        guard let batchId = members["batchId"]?.stringValue, !batchId.isEmpty, batchId.utf8.count <= 128 else {
            throw .init("member \"batchId\" must be a non-empty string of at most 128 bytes")
        }
        guard case .array(let items)? = members["entries"] else { throw .init("member \"entries\" must be an array") }
        var entries: [SyncEntry] = []
        entries.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard let fields = item.objectValue else { throw .init("entries[\(index)] is not an object") }
            guard let seq = fields["seq"]?.integerValue, seq >= 0 else {
                throw .init("entries[\(index)].seq must be a non-negative integer")
            }
            guard fields["idempotencyKey"]?.stringValue == "\(Hex.encode(logId))-\(seq)" else {
                throw .init("entries[\(index)].idempotencyKey must be \"<logId>-<seq>\"")
            }
            guard let text = fields["entry"]?.stringValue, let data = Data(base64Encoded: text) else {
                throw .init("entries[\(index)].entry must be base64")
            }
            entries.append(SyncEntry(seq: UInt64(seq), bytes: Array(data)))
        }
        var checkpoint: SignedCheckpoint?
        if let value = members["checkpoint"], value != .null {
            do {
                checkpoint = try SignedCheckpoint(json: value)
            } catch {
                throw .init("member \"checkpoint\": \(error.message)")
            }
        }
        self.init(
            logId: logId,
            batchId: batchId,
            entries: entries,
            checkpoint: checkpoint,
            version: version,
            treeSize: treeSize
        )
    }
}

/// What the collector did with one entry.
public struct SyncEntryResult: Sendable, Hashable {
    /// The outcome.
    public enum Status: String, Sendable, Hashable {
        /// Stored now.
        case accepted
        /// Already stored, byte for byte: the retry had no effect.
        case duplicate
        /// Not stored; see `code`, `reason` and `retryable`.
        case rejected
    }

    /// The entry's sequence number.
    public var seq: UInt64
    /// The outcome.
    public var status: Status
    /// An HTTP-style code for the outcome: 200 accepted or duplicate; 400, 409 or 422 for a permanent rejection
    /// (malformed, fork or chain break, invalid signature); 503 when the entry may be retried.
    public var code: Int
    /// The collector's reason for a rejection (empty otherwise).
    public var reason: String

    /// Creates a result.
    public init(seq: UInt64, status: Status, code: Int = 200, reason: String = "") {
        self.seq = seq
        self.status = status
        self.code = code
        self.reason = reason
    }

    /// Whether a rejection may succeed later (a 408, 429 or 5xx code).
    public var isRetryable: Bool {
        status == .rejected && (code == 408 || code == 429 || code >= 500)
    }
}

/// The collector's signed statement of the head it holds for a log: every entry up to `seq` is stored or
/// accounted for by a removal record, and the entry at `seq` has hash `entryHash`.
public struct CollectorReceipt: Sendable, Hashable {
    /// The log.
    public var logId: [UInt8]
    /// The contiguous head the collector holds.
    public var seq: UInt64
    /// Entry hash at `seq`.
    public var entryHash: [UInt8]
    /// When the collector signed it.
    public var receivedAt: AuditTimestamp
    /// Id of the collector's Ed25519 key (same derivation as signing key ids).
    public var collectorKeyId: KeyID
    /// Ed25519 signature over ``signedMessage``.
    public var signature: [UInt8]

    /// Creates a receipt.
    public init(
        logId: [UInt8],
        seq: UInt64,
        entryHash: [UInt8],
        receivedAt: AuditTimestamp,
        collectorKeyId: KeyID,
        signature: [UInt8]
    ) {
        self.logId = logId
        self.seq = seq
        self.entryHash = entryHash
        self.receivedAt = receivedAt
        self.collectorKeyId = collectorKeyId
        self.signature = signature
    }

    /// Signs a receipt with the collector's key.
    public init(logId: [UInt8], seq: UInt64, entryHash: [UInt8], receivedAt: AuditTimestamp, key: SigningKey) {
        self.init(
            logId: logId,
            seq: seq,
            entryHash: entryHash,
            receivedAt: receivedAt,
            collectorKeyId: key.id,
            signature: []
        )
        signature = Array((try? key.privateKey.signature(for: signedMessage)) ?? Data())
    }

    /// `"audit-chain/v1/receipt" || logId (16) || seq (8, big-endian) || entryHash (32) ||
    /// receivedAt (8, big-endian signed milliseconds since the Unix epoch)`.
    public var signedMessage: [UInt8] {
        var message = SyncWire.receiptDomain + logId
        withUnsafeBytes(of: seq.bigEndian) { message.append(contentsOf: $0) }
        message += entryHash
        withUnsafeBytes(of: receivedAt.millisecondsSinceEpoch.bigEndian) { message.append(contentsOf: $0) }
        return message
    }

    /// Whether `key` signed this receipt.
    public func isSigned(by key: Curve25519.Signing.PublicKey) -> Bool {
        KeyID.signing(key) == collectorKeyId && key.isValidSignature(signature, for: signedMessage)
    }

    /// The JSON form.
    public var json: JSONValue {
        .object([
            "v": .integer(SyncWire.version),
            "logId": .string(Hex.encode(logId)),
            "seq": .unsigned(seq),
            "entryHash": .string(Hex.encode(entryHash)),
            "receivedAt": .string(receivedAt.rfc3339),
            "collectorKeyId": .string(collectorKeyId.hex),
            "signature": .string(Hex.encode(signature)),
        ])
    }

    /// Reads the JSON form.
    /// - Throws: ``SyncWire/DecodingError`` naming the member that is wrong.
    public init(json value: JSONValue) throws(SyncWire.DecodingError) {
        guard let members = value.objectValue, members["v"] == .integer(SyncWire.version) else {
            throw .init("receipt: member \"v\" must be 1")
        }
        func hex(_ name: String, _ size: Int) throws(SyncWire.DecodingError) -> [UInt8] {
            guard let text = members[name]?.stringValue, let bytes = Hex.decode(text), bytes.count == size else {
                throw .init("receipt: member \"\(name)\" must be \(size * 2) hex digits")
            }
            return bytes
        }
        guard let seq = members["seq"]?.integerValue, seq >= 0 else { throw .init("receipt: member \"seq\"") }
        guard let text = members["receivedAt"]?.stringValue, let time = AuditTimestamp(rfc3339: text) else {
            throw .init("receipt: member \"receivedAt\" must be an RFC 3339 time")
        }
        guard let keyId = KeyID(bytes: try hex("collectorKeyId", FormatConstants.keyIdSize)) else {
            throw .init("receipt: member \"collectorKeyId\" must be 32 hex digits")
        }
        self.init(
            logId: try hex("logId", FormatConstants.logIdSize),
            seq: UInt64(seq),
            entryHash: try hex("entryHash", FormatConstants.hashSize),
            receivedAt: time,
            collectorKeyId: keyId,
            signature: try hex("signature", FormatConstants.signatureSize)
        )
    }
}

/// Version 2's receipt (docs/PROTOCOL.md section 3.2): the collector's tree of the log as a signed C2SP checkpoint,
/// with the proofs that let the agent check it against its own entries and its last verified checkpoint.
public struct TreeReceipt: Sendable, Hashable {
    /// A consistency proof from an earlier tree size to the checkpoint's.
    public struct Consistency: Sendable, Hashable {
        /// The earlier size (the `treeSize` the batch stated).
        public var from: UInt64
        /// The proof's hashes (RFC 9162 section 2.1.4).
        public var proof: [[UInt8]]

        /// Creates one.
        public init(from: UInt64, proof: [[UInt8]]) {
            self.from = from
            self.proof = proof
        }
    }

    /// The log.
    public var logId: [UInt8]
    /// The seq of the tree's last leaf: the collector's contiguous head.
    public var seq: UInt64
    /// The entry hash at `seq`.
    public var entryHash: [UInt8]
    /// The last leaf's index: the checkpoint's size minus one.
    public var leafIndex: UInt64
    /// The signed checkpoint note, as the collector signed it (docs/TRANSPARENCY.md section 6).
    public var checkpoint: String
    /// The inclusion proof of leaf `leafIndex` (the entry at `seq`) in the checkpoint's tree.
    public var inclusion: [[UInt8]]
    /// The consistency proof from the batch's `treeSize` when it was smaller than the checkpoint's and not 0.
    public var consistency: Consistency?

    /// Creates a receipt.
    public init(
        logId: [UInt8],
        seq: UInt64,
        entryHash: [UInt8],
        leafIndex: UInt64,
        checkpoint: String,
        inclusion: [[UInt8]],
        consistency: Consistency?
    ) {
        self.logId = logId
        self.seq = seq
        self.entryHash = entryHash
        self.leafIndex = leafIndex
        self.checkpoint = checkpoint
        self.inclusion = inclusion
        self.consistency = consistency
    }

    private static func hashes(_ proof: [[UInt8]]) -> JSONValue {
        .array(proof.map { .string(Data($0).base64EncodedString()) })
    }

    /// The JSON form.
    public var json: JSONValue {
        .object([
            "v": .integer(SyncWire.treeVersion),
            "logId": .string(Hex.encode(logId)),
            "seq": .unsigned(seq),
            "entryHash": .string(Hex.encode(entryHash)),
            "leafIndex": .unsigned(leafIndex),
            "checkpoint": .string(checkpoint),
            "inclusion": Self.hashes(inclusion),
            "consistency": consistency.map { .object(["from": .unsigned($0.from), "proof": Self.hashes($0.proof)]) }
                ?? .null,
        ])
    }

    /// Reads the JSON form. Sizes are bounded: at most ``SyncWire/maxProofHashes`` hashes per proof, each 32 bytes,
    /// and a checkpoint of at most 8 KiB.
    /// - Throws: ``SyncWire/DecodingError`` naming the member that is wrong.
    public init(json value: JSONValue) throws(SyncWire.DecodingError) {
        guard let members = value.objectValue, members["v"] == .integer(SyncWire.treeVersion) else {
            throw .init("receipt: member \"v\" must be 2")
        }
        func hex(_ name: String, _ size: Int) throws(SyncWire.DecodingError) -> [UInt8] {
            guard let text = members[name]?.stringValue, let bytes = Hex.decode(text), bytes.count == size else {
                throw .init("receipt: member \"\(name)\" must be \(size * 2) hex digits")
            }
            return bytes
        }
        func unsigned(_ value: JSONValue?, _ name: String) throws(SyncWire.DecodingError) -> UInt64 {
            guard let number = value?.integerValue, number >= 0 else {
                throw .init("receipt: member \"\(name)\" must be a non-negative integer")
            }
            return UInt64(number)
        }
        func hashes(_ value: JSONValue?, _ name: String) throws(SyncWire.DecodingError) -> [[UInt8]] {
            guard case .array(let items)? = value, items.count <= SyncWire.maxProofHashes else {
                throw .init("receipt: member \"\(name)\" must be an array of at most \(SyncWire.maxProofHashes) hashes")
            }
            var proof: [[UInt8]] = []
            for item in items {
                guard let text = item.stringValue, let data = Data(base64Encoded: text), data.count == 32 else {
                    throw .init("receipt: member \"\(name)\" must hold base64 SHA-256 hashes")
                }
                proof.append(Array(data))
            }
            return proof
        }
        guard let checkpoint = members["checkpoint"]?.stringValue, checkpoint.utf8.count <= 8192 else {
            throw .init("receipt: member \"checkpoint\" must be a signed note of at most 8192 bytes")
        }
        var consistency: Consistency?
        if let value = members["consistency"], value != .null {
            guard let fields = value.objectValue else {
                throw .init("receipt: member \"consistency\" must be an object or null")
            }
            consistency = Consistency(
                from: try unsigned(fields["from"], "consistency.from"),
                proof: try hashes(fields["proof"], "consistency.proof")
            )
        }
        self.init(
            logId: try hex("logId", FormatConstants.logIdSize),
            seq: try unsigned(members["seq"], "seq"),
            entryHash: try hex("entryHash", FormatConstants.hashSize),
            leafIndex: try unsigned(members["leafIndex"], "leafIndex"),
            checkpoint: checkpoint,
            inclusion: try hashes(members["inclusion"], "inclusion"),
            consistency: consistency
        )
    }
}

/// The 200 response of `POST /v1/audit/events`: one result per entry of the batch, in the batch's order, and a
/// receipt for the head the collector now holds (absent when it holds nothing contiguous from the genesis yet).
public struct SyncResponse: Sendable, Hashable {
    /// Per-entry results.
    public var results: [SyncEntryResult]
    /// The signed head (version 1).
    public var receipt: CollectorReceipt?
    /// The signed tree head with its proofs (version 2).
    public var treeReceipt: TreeReceipt?
    /// The protocol version: the batch's.
    public var version: Int64

    /// Creates a version 1 response.
    public init(results: [SyncEntryResult], receipt: CollectorReceipt?) {
        self.results = results
        self.receipt = receipt
        self.treeReceipt = nil
        self.version = SyncWire.version
    }

    /// Creates a version 2 response.
    public init(results: [SyncEntryResult], treeReceipt: TreeReceipt?) {
        self.results = results
        self.receipt = nil
        self.treeReceipt = treeReceipt
        self.version = SyncWire.treeVersion
    }

    /// The JSON body.
    public var json: JSONValue {
        .object([
            "v": .integer(version),
            "results": .array(
                results.map { result in
                    .object([
                        "seq": .unsigned(result.seq),
                        "status": .string(result.status.rawValue),
                        "code": .integer(Int64(result.code)),
                        "reason": .string(result.reason),
                    ])
                }
            ),
            "receipt": (version == SyncWire.treeVersion ? treeReceipt?.json : receipt?.json) ?? .null,
        ])
    }

    /// Reads a body.
    /// - Throws: ``SyncWire/DecodingError`` naming the member that is wrong.
    public init(json value: JSONValue) throws(SyncWire.DecodingError) {
        guard let members = value.objectValue, let version = members["v"]?.integerValue,
            version == SyncWire.version || version == SyncWire.treeVersion
        else {
            throw .init("response: member \"v\" must be 1 or 2")
        }
        guard case .array(let items)? = members["results"] else { throw .init("response: \"results\" is missing") }
        var results: [SyncEntryResult] = []
        for (index, item) in items.enumerated() {
            guard let fields = item.objectValue, let seq = fields["seq"]?.integerValue, seq >= 0,
                let statusText = fields["status"]?.stringValue,
                let status = SyncEntryResult.Status(rawValue: statusText),
                let code = fields["code"]?.integerValue, (100...599).contains(code)
            else { throw .init("response: results[\(index)] needs seq, status and an HTTP code (100...599)") }
            results.append(
                SyncEntryResult(
                    seq: UInt64(seq),
                    status: status,
                    code: Int(code),
                    reason: fields["reason"]?.stringValue ?? ""
                )
            )
        }
        guard let value = members["receipt"], value != .null else {
            self =
                version == SyncWire.version
                ? .init(results: results, receipt: nil) : .init(results: results, treeReceipt: nil)
            return
        }
        if version == SyncWire.version {
            self.init(results: results, receipt: try CollectorReceipt(json: value))
        } else {
            self.init(results: results, treeReceipt: try TreeReceipt(json: value))
        }
    }
}
