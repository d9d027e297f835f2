public import AuditChain
public import Crypto
import Foundation

/// The JSON messages of the sync protocol (docs/PROTOCOL.md), shared by the agent and the collector.
public enum SyncWire {
    /// The protocol version carried as `"v"` in every message.
    public static let version: Int64 = 1
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

    /// Creates a batch.
    public init(logId: [UInt8], batchId: String, entries: [SyncEntry], checkpoint: SignedCheckpoint?) {
        self.logId = logId
        self.batchId = batchId
        self.entries = entries
        self.checkpoint = checkpoint
    }

    /// The JSON body.
    public var json: JSONValue {
        let logHex = Hex.encode(logId)
        var members: [String: JSONValue] = [
            "v": .integer(SyncWire.version),
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
        return .object(members)
    }

    /// Reads a body.
    /// - Throws: ``SyncWire/DecodingError`` naming the member that is wrong.
    public init(json value: JSONValue) throws(SyncWire.DecodingError) {
        guard let members = value.objectValue else { throw .init("the body is not a JSON object") }
        guard members["v"] == .integer(SyncWire.version) else { throw .init("member \"v\" must be 1") }
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
        self.init(logId: logId, batchId: batchId, entries: entries, checkpoint: checkpoint)
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

/// The 200 response of `POST /v1/audit/events`: one result per entry of the batch, in the batch's order, and a
/// receipt for the head the collector now holds (absent when it holds nothing contiguous from the genesis yet).
public struct SyncResponse: Sendable, Hashable {
    /// Per-entry results.
    public var results: [SyncEntryResult]
    /// The signed head.
    public var receipt: CollectorReceipt?

    /// Creates a response.
    public init(results: [SyncEntryResult], receipt: CollectorReceipt?) {
        self.results = results
        self.receipt = receipt
    }

    /// The JSON body.
    public var json: JSONValue {
        .object([
            "v": .integer(SyncWire.version),
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
            "receipt": receipt?.json ?? .null,
        ])
    }

    /// Reads a body.
    /// - Throws: ``SyncWire/DecodingError`` naming the member that is wrong.
    public init(json value: JSONValue) throws(SyncWire.DecodingError) {
        guard let members = value.objectValue, members["v"] == .integer(SyncWire.version) else {
            throw .init("response: member \"v\" must be 1")
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
        var receipt: CollectorReceipt?
        if let value = members["receipt"], value != .null { receipt = try CollectorReceipt(json: value) }
        self.init(results: results, receipt: receipt)
    }
}
