public import AuditChain

/// Where delivery stands: what `auditctl queue status` prints and the agent exports as metrics.
public struct DeliveryStatus: Sendable, Hashable {
    /// Entries waiting to be delivered.
    public var pending: Int
    /// Entries in the dead-letter queue.
    public var dlq: Int
    /// Entries that left delivery and wait for their accounted-removal record (sealed before the next attempt).
    public var awaitingRecord: Int
    /// Entries that left delivery since the log was created, by reason.
    public var dropped: [String: Int]
    /// The health the agent last stated (`unknown` if no agent has run).
    public var health: String
    /// When the backend last answered (RFC 3339), if ever.
    public var lastSuccess: String?
    /// The last failure the agent saw, if the backend has not answered since.
    public var lastError: String?
    /// The head the collector's latest receipt states, if any.
    public var receiptSeq: UInt64?

    /// Metadata keys kept beside the log.
    public enum Meta {
        /// Prefix of the per-reason dropped counters.
        public static let droppedPrefix = "delivery.dropped."
        /// Health the agent last stated.
        public static let health = "delivery.health"
        /// RFC 3339 time of the last answer.
        public static let lastSuccess = "delivery.lastSuccess"
        /// Last failure.
        public static let lastError = "delivery.lastError"
        /// The latest receipt, canonical JSON.
        public static let receipt = "delivery.receipt"
        /// The last effective time (clock-jump rule), milliseconds.
        public static let effectiveTime = "delivery.effectiveTime"
    }

    /// Reads the status from the storage (no transaction; another process may be writing).
    public static func read(_ storage: any LogStorage, policy: DeliveryPolicy = .init()) throws -> DeliveryStatus {
        let table = try storage.deliveryTable(scope: .counts)
        let metadata = try storage.snapshot().metadata
        var dropped: [String: Int] = [:]
        for (key, value) in metadata where key.hasPrefix(Meta.droppedPrefix) {
            dropped[String(key.dropFirst(Meta.droppedPrefix.count))] = Int(value) ?? 0
        }
        let pending = table.count(.pending)
        var health = metadata[Meta.health] ?? "unknown"
        if health == DeliveryHealth.healthy.rawValue, pending > policy.degradedPending {
            health = DeliveryHealth.degraded.rawValue
        }
        let receipt = metadata[Meta.receipt].flatMap { text in
            (try? JSONValue(parsing: Array(text.utf8))).flatMap { try? CollectorReceipt(json: $0) }
        }
        return DeliveryStatus(
            pending: pending,
            dlq: table.count(.dlq),
            awaitingRecord: table.count(.removed),
            dropped: dropped,
            health: health,
            lastSuccess: metadata[Meta.lastSuccess],
            lastError: metadata[Meta.lastError],
            receiptSeq: receipt?.seq
        )
    }

    /// The JSON form (`auditctl queue status --json`).
    public var json: JSONValue {
        .object([
            "pending": .integer(Int64(pending)),
            "dlq": .integer(Int64(dlq)),
            "awaitingRecord": .integer(Int64(awaitingRecord)),
            "dropped": .object(dropped.mapValues { .integer(Int64($0)) }),
            "health": .string(health),
            "lastSuccess": lastSuccess.map { .string($0) } ?? .null,
            "lastError": lastError.map { .string($0) } ?? .null,
            "receiptSeq": receiptSeq.map { .integer(Int64($0)) } ?? .null,
        ])
    }

    /// Adds `counts` to the dropped counters in `metadata` (read from `stored`).
    static func addDropped(_ counts: [String: Int], stored: [String: String], into metadata: inout [String: String]) {
        for (reason, count) in counts where count > 0 {
            let key = Meta.droppedPrefix + reason
            let current = Int(metadata[key] ?? stored[key] ?? "0") ?? 0
            metadata[key] = String(current + count)
        }
    }
}
