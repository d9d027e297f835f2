public import AuditChain
import AuditWire

/// Where delivery stands: what `auditctl queue status` prints and the agent exports as metrics.
public struct DeliveryStatus: Sendable, Hashable {
    /// Entries waiting to be delivered: events and records together.
    public var pending: Int
    /// Pending events (what the pending limit counts).
    public var pendingEvents: Int
    /// Pending system records (genesis, rotations, removal, retention and checkpoint records): they never leave
    /// delivery except by being accepted.
    public var pendingRecords: Int
    /// Entries in the dead-letter queue.
    public var dlq: Int
    /// Entries that left delivery and wait for their accounted-removal record (sealed before the next attempt).
    public var awaitingRecord: Int
    /// Entries that left delivery since the log was created, by reason.
    public var dropped: [String: Int]
    /// The health the agent last stated (`unknown` if no agent has run), made worse when the collector's verified
    /// copy lags now.
    public var health: String
    /// When the backend last answered (RFC 3339), if ever.
    public var lastSuccess: String?
    /// The last failure the agent saw, if the backend has not answered since.
    public var lastError: String?
    /// The head the collector's latest **verified** receipt states, if any (the verified collector head).
    public var receiptSeq: UInt64?
    /// How far the collector's verified copy is behind the log.
    public var lag: ReceiptLag
    /// The collector's last checkpoint the agent verified (a C2SP signed note), if any: what an investigator
    /// compares with a checkpoint the collector shows them (`auditctl verify-consistency`).
    public var checkpoint: String?
    /// The wall time (milliseconds) the lag's age was measured at.
    public var measuredAt: Int64
    /// A format version 2 log's current epoch (docs/FORMAT.md section 13); nil for version 1.
    public var epoch: ChainRules.EpochState? = nil

    /// Whether the current epoch began more than two epoch lengths before ``measuredAt`` (the rule of
    /// `ChainRules.openEnd`): the agent that ends epochs on time is stopped or stuck, and the forward security of
    /// the log waits for it (the current key signs for longer than its epoch).
    public var epochStale: Bool {
        guard let epoch else { return false }
        return ChainRules.openEnd(epoch, now: AuditTimestamp(millisecondsSinceEpoch: measuredAt)) != nil
    }

    /// Metadata keys kept beside the log (the collector trust's are ``CollectorTrust/Meta``).
    public enum Meta: Sendable {
        /// Prefix of the per-reason dropped counters.
        public static let droppedPrefix = "delivery.dropped."
        /// Health the agent last stated.
        public static let health = "delivery.health"
        /// RFC 3339 time of the last answer.
        public static let lastSuccess = "delivery.lastSuccess"
        /// Last failure.
        public static let lastError = "delivery.lastError"
        /// The last effective time (clock-jump rule), milliseconds.
        public static let effectiveTime = "delivery.effectiveTime"
    }

    /// Reads the status from the storage (no transaction; another process may be writing).
    /// - Parameter now: wall time in milliseconds, for the lag's age.
    public static func read(
        _ storage: any LogStorage,
        policy: DeliveryPolicy = .init(),
        now: Int64 = AuditTimestamp.now().millisecondsSinceEpoch
    ) throws -> DeliveryStatus {
        let table = try storage.deliveryTable(scope: .counts)
        let metadata = try storage.snapshot().metadata
        var dropped: [String: Int] = [:]
        for (key, value) in metadata where key.hasPrefix(Meta.droppedPrefix) {
            dropped[String(key.dropFirst(Meta.droppedPrefix.count))] = Int(value) ?? 0
        }
        let pending = table.count(.pending)
        let trust = CollectorTrust(metadata: metadata)
        let lag = try ReceiptLag.read(storage, trust: trust)
        var health = metadata[Meta.health] ?? "unknown"
        let epoch = AuditLog.epochState(metadata)
        let epochStale = epoch.map { ChainRules.openEnd($0, now: AuditTimestamp(millisecondsSinceEpoch: now)) != nil }
        // The stored health is what the agent saw at its last cycle; a copy that lags now, or epochs that stopped
        // ending (an agent stopped or stuck), make it no better than degraded.
        if health == DeliveryHealth.healthy.rawValue,
            pending > policy.degradedPending || lag.isLagging(now: now, policy: policy) || epochStale == true
        {
            health = DeliveryHealth.degraded.rawValue
        }
        let lastError = metadata[Meta.lastError].flatMap { $0.isEmpty ? nil : $0 }
        var status = DeliveryStatus(
            pending: pending,
            pendingEvents: table.pendingEvents,
            pendingRecords: pending - table.pendingEvents,
            dlq: table.count(.dlq),
            awaitingRecord: table.count(.removed),
            dropped: dropped,
            health: health,
            lastSuccess: metadata[Meta.lastSuccess],
            lastError: lastError,
            receiptSeq: lag.collectorHead,
            lag: lag,
            checkpoint: trust.treeReceipt?.checkpoint,
            measuredAt: now
        )
        status.epoch = epoch
        return status
    }

    /// The JSON form (`auditctl queue status --json`, the agent's `GET /v1/status`).
    public var json: JSONValue {
        func integer(_ value: UInt64?) -> JSONValue { value.map { .integer(Int64(clamping: $0)) } ?? .null }
        return .object([
            "pending": .integer(Int64(pending)),
            "pendingEvents": .integer(Int64(pendingEvents)),
            "pendingRecords": .integer(Int64(pendingRecords)),
            "dlq": .integer(Int64(dlq)),
            "awaitingRecord": .integer(Int64(awaitingRecord)),
            "dropped": .object(dropped.mapValues { .integer(Int64($0)) }),
            "health": .string(health),
            "lastSuccess": lastSuccess.map { .string($0) } ?? .null,
            "lastError": lastError.map { .string($0) } ?? .null,
            "receiptSeq": integer(receiptSeq),
            "collectorHead": integer(lag.collectorHead),
            "deviceHead": integer(lag.deviceHead),
            "lagEntries": .integer(Int64(clamping: lag.entries)),
            "lagSince": lag.entries > 0
                ? lag.since.map { .string(AuditTimestamp(millisecondsSinceEpoch: $0).rfc3339) } ?? .null : .null,
            "lagSeconds": .integer(lag.age(now: measuredAt) / 1000),
            "checkpoint": checkpoint.map { .string($0) } ?? .null,
            "epoch": epoch.map { epoch in
                .object([
                    "epoch": .integer(Int64(clamping: epoch.number)), "startedAt": .string(epoch.startsAt.rfc3339),
                    "epochSeconds": .integer(Int64(clamping: epoch.epochSeconds)), "stale": .bool(epochStale),
                ])
            } ?? .null,
        ])
    }

    /// Adds `counts` to the dropped counters in `metadata` (read from `stored`).
    package static func addDropped(
        _ counts: [String: Int],
        stored: [String: String],
        into metadata: inout [String: String]
    ) {
        for (reason, count) in counts where count > 0 {
            let key = Meta.droppedPrefix + reason
            let current = Int(metadata[key] ?? stored[key] ?? "0") ?? 0
            metadata[key] = String(current + count)
        }
    }
}
