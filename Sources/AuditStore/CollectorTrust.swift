public import AuditChain
package import AuditWire
public import Crypto

/// The agent's trust in its collector, kept beside the log in its metadata table: the last verified receipt (whose
/// signed checkpoint is the last tree the agent verified), the collector key pinned at first contact, the last receipt
/// that failed verification (evidence), and what `auditctl queue forget-collector` dropped. Every read of these rows
/// goes through ``init(metadata:)`` (each value parsed once) and every write through the rows this type makes
/// (``verifiedRows(receipt:pin:)``, ``rejectedRows(evidence:)``, ``forgetRows(at:)``): the keys and values on disk
/// are the ones logs have always held (docs/DELIVERY.md, "Receipts").
public struct CollectorTrust: Sendable {
    /// The metadata keys, as logs hold them.
    public enum Meta: Sendable {
        /// The latest verified receipt, canonical JSON: a version 2 tree receipt (its signed checkpoint is the last
        /// one the agent verified), or a version 1 receipt kept from before.
        public static let receipt = "delivery.receipt"
        /// The collector's Ed25519 public key (64 hex digits), pinned at first contact or configured.
        public static let collectorKey = "delivery.collectorKey"
        /// The last receipt that failed verification, canonical JSON, with why: evidence of a lying or forked
        /// collector.
        public static let rejectedReceipt = "delivery.rejectedReceipt"
        /// What `auditctl queue forget-collector` dropped (receipt, refused receipt, pinned key) and when, as
        /// canonical JSON.
        public static let forgottenReceipt = "delivery.forgottenReceipt"
    }

    /// The last verified receipt, parsed; nil when there is none (an empty value reads as none).
    public let receipt: JSONValue?
    /// The log and head the last verified receipt states, version 1 or 2.
    public let receiptHead: (logId: [UInt8], seq: UInt64)?
    /// The last verified receipt when it is a version 2 tree receipt.
    package let treeReceipt: TreeReceipt?
    /// The pinned collector key, if one is pinned and valid.
    public let pinnedKey: Curve25519.Signing.PublicKey?
    /// The pinned key's row as stored (64 hex digits; empty after `forget-collector`), if the row exists.
    public let pinnedKeyText: String?
    /// The last refused receipt's evidence, parsed; nil when there is none.
    public let rejectedReceipt: JSONValue?

    /// The trust the metadata rows state; missing, empty and unparseable values read as absent.
    public init(metadata: [String: String]) {
        func nonEmpty(_ key: String) -> String? { metadata[key].flatMap { $0.isEmpty ? nil : $0 } }
        receipt = nonEmpty(Meta.receipt).flatMap { try? JSONValue(parsing: Array($0.utf8)) }
        let tree = receipt.flatMap { try? TreeReceipt(json: $0) }
        treeReceipt = tree
        if let tree {
            receiptHead = (tree.logId, tree.seq)
        } else {
            receiptHead = receipt.flatMap { try? CollectorReceipt(json: $0) }.map { ($0.logId, $0.seq) }
        }
        pinnedKeyText = metadata[Meta.collectorKey]
        pinnedKey = nonEmpty(Meta.collectorKey).flatMap(Hex.decode).flatMap {
            try? Curve25519.Signing.PublicKey(rawRepresentation: $0)
        }
        rejectedReceipt = nonEmpty(Meta.rejectedReceipt).flatMap { try? JSONValue(parsing: Array($0.utf8)) }
    }

    /// The trust kept beside the log in `storage` (one snapshot read).
    public static func load(_ storage: any LogStorage) throws -> CollectorTrust {
        CollectorTrust(metadata: try storage.snapshot().metadata)
    }

    /// The rows that keep `receipt` as the last verified one, and pin `pin` with it (first contact).
    package static func verifiedRows(receipt: JSONValue, pin: Curve25519.Signing.PublicKey?) -> [String: String] {
        var rows = [Meta.receipt: String(decoding: receipt.canonicalBytes, as: UTF8.self)]
        if let pin { rows[Meta.collectorKey] = Hex.encode(pin.rawRepresentation) }
        return rows
    }

    /// The row that keeps `evidence` (a refused receipt, why, and the last verified one) as the last refusal.
    package static func rejectedRows(evidence: JSONValue) -> [String: String] {
        [Meta.rejectedReceipt: String(decoding: evidence.canonicalBytes, as: UTF8.self)]
    }

    /// The rows that forget the collector (`auditctl queue forget-collector`): the receipt, the pinned key and the
    /// refused receipt are kept as evidence under ``Meta/forgottenReceipt`` with `time`, and emptied (empty values
    /// read as absent: the next receipt is trusted as at first contact).
    public func forgetRows(at time: AuditTimestamp) -> [String: String] {
        let kept = JSONValue.object([
            "forgottenAt": .string(time.rfc3339),
            "receipt": receipt ?? .null,
            "rejectedReceipt": rejectedReceipt ?? .null,
            "collectorKey": pinnedKeyText.map { .string($0) } ?? .null,
        ])
        return [
            Meta.forgottenReceipt: String(decoding: kept.canonicalBytes, as: UTF8.self),
            Meta.receipt: "",
            Meta.collectorKey: "",
            Meta.rejectedReceipt: "",
        ]
    }

    /// The trust once `rows` (made by this type) are written over `self`'s.
    public func applying(_ rows: [String: String]) -> CollectorTrust {
        var metadata: [String: String] = [:]
        if let receipt { metadata[Meta.receipt] = String(decoding: receipt.canonicalBytes, as: UTF8.self) }
        if let pinnedKeyText { metadata[Meta.collectorKey] = pinnedKeyText }
        if let rejectedReceipt {
            metadata[Meta.rejectedReceipt] = String(decoding: rejectedReceipt.canonicalBytes, as: UTF8.self)
        }
        metadata.merge(rows) { _, new in new }
        return CollectorTrust(metadata: metadata)
    }
}
