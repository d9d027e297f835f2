public import AuditChain
public import AuditStore
public import AuditSync
import Foundation

/// The agent's Prometheus metrics, rendered by hand in the text exposition format 0.0.4.
public struct AgentMetrics: Sendable, Hashable {
    /// The reasons entries leave delivery; each is always exported, 0 until it happens.
    public static let dropReasons = [DeliveryReason.expired, .fifo, .dlqOverflow, .rejected].map(\.rawValue)
    /// The health states; the current one is 1, the others 0.
    public static let healthStates = ["healthy", "degraded", "failOpen", "failing"]
    /// The content type of the exposition.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Entries waiting to be delivered.
    public var pending: Int
    /// Entries in the dead-letter queue.
    public var dlq: Int
    /// Entries that left delivery whose accounted-removal record is not sealed yet.
    public var awaitingRecord: Int
    /// Entries that left delivery since the log was created, by reason.
    public var dropped: [String: Int]
    /// The delivery health (`healthy`, `degraded`, `failOpen`, or `unknown`).
    public var health: String
    /// When the backend last answered (RFC 3339), if ever.
    public var lastSuccess: String?
    /// Duration of the last answered request to the backend, if any.
    public var lastLatency: Duration?
    /// Entries delivered since the agent started.
    public var deliveredTotal: Int
    /// Requests sent to the backend since the agent started.
    public var requestsTotal: Int
    /// Pending system records (genesis, rotations, removal, retention, checkpoint records) among `pending`.
    public var pendingRecords = 0
    /// The head of the collector's latest verified receipt, if any.
    public var collectorHead: UInt64?
    /// Entries sealed but not covered by a verified receipt.
    public var lagEntries: UInt64 = 0
    /// How long the oldest of them has waited, in seconds.
    public var lagSeconds: Int64 = 0
    /// Pinned entries the collector refuses (each holds the health at `failing` until accepted).
    public var heldEntries = 0
    /// A format version 2 log's current epoch; nil for version 1.
    public var epoch: ChainRules.EpochState?
    /// Whether it is stale: no epoch record for two epoch lengths (``DeliveryStatus/epochStale``).
    public var epochStale = false

    /// Creates a snapshot.
    public init(
        pending: Int,
        dlq: Int,
        dropped: [String: Int],
        health: String,
        lastSuccess: String?,
        lastLatency: Duration?,
        deliveredTotal: Int,
        requestsTotal: Int,
        awaitingRecord: Int = 0
    ) {
        self.pending = pending
        self.dlq = dlq
        self.awaitingRecord = awaitingRecord
        self.dropped = dropped
        self.health = health
        self.lastSuccess = lastSuccess
        self.lastLatency = lastLatency
        self.deliveredTotal = deliveredTotal
        self.requestsTotal = requestsTotal
    }

    /// Creates a snapshot from a delivery status and the engine's counters.
    public init(status: DeliveryStatus, lastLatency: Duration?, deliveredTotal: Int, requestsTotal: Int) {
        self.init(
            pending: status.pending,
            dlq: status.dlq,
            dropped: status.dropped,
            health: status.health,
            lastSuccess: status.lastSuccess,
            lastLatency: lastLatency,
            deliveredTotal: deliveredTotal,
            requestsTotal: requestsTotal,
            awaitingRecord: status.awaitingRecord
        )
        pendingRecords = status.pendingRecords
        collectorHead = status.lag.collectorHead
        lagEntries = status.lag.entries
        lagSeconds = status.lag.age(now: status.measuredAt) / 1000
        epoch = status.epoch
        epochStale = status.epochStale
    }

    /// Reads a snapshot from the log's storage and the engine (nil when delivery is off).
    public static func collect(log: AuditLog, engine: SyncEngine?, policy: DeliveryPolicy) async throws -> AgentMetrics
    {
        let status = try DeliveryStatus.read(log.storage, policy: policy)
        guard let engine else {
            return AgentMetrics(status: status, lastLatency: nil, deliveredTotal: 0, requestsTotal: 0)
        }
        var metrics = AgentMetrics(
            status: status,
            lastLatency: await engine.lastLatency,
            deliveredTotal: await engine.deliveredTotal,
            requestsTotal: await engine.requestsTotal
        )
        metrics.heldEntries = await engine.heldCount
        return metrics
    }

    /// The exposition text: HELP and TYPE lines, then the samples.
    public var text: String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { out += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        family("auditd_pending_entries", "gauge", "Entries waiting to be delivered.", [("", "\(pending)")])
        family(
            "auditd_pending_records",
            "gauge",
            "System records among the pending entries (they leave delivery only by being accepted).",
            [("", "\(pendingRecords)")]
        )
        family("auditd_dlq_entries", "gauge", "Entries in the dead-letter queue.", [("", "\(dlq)")])
        family(
            "auditd_collector_head_seq",
            "gauge",
            "Sequence number of the collector's latest verified receipt (-1 before the first).",
            [("", collectorHead.map { "\($0)" } ?? "-1")]
        )
        family(
            "auditd_receipt_lag_entries",
            "gauge",
            "Entries sealed but not covered by a verified collector receipt.",
            [("", "\(lagEntries)")]
        )
        family(
            "auditd_receipt_lag_seconds",
            "gauge",
            "How long the oldest entry not covered by a verified collector receipt has waited.",
            [("", "\(lagSeconds)")]
        )
        family(
            "auditd_held_entries",
            "gauge",
            "System records the collector refuses; delivery after them is held and health is failing.",
            [("", "\(heldEntries)")]
        )
        family(
            "auditd_awaiting_record_entries",
            "gauge",
            "Entries that left delivery whose accounted-removal record is not sealed yet (while delivery is paused, "
                + "or while the log refuses the record: see the error log).",
            [("", "\(awaitingRecord)")]
        )
        let reasons = Set(Self.dropReasons).union(dropped.keys).sorted()
        family(
            "auditd_dropped_entries_total",
            "counter",
            "Entries that left delivery (each accounted for by a signed record in the chain), by reason.",
            reasons.map { ("{reason=\"\(Self.escape($0))\"}", "\(dropped[$0] ?? 0)") }
        )
        family(
            "auditd_sync_latency_seconds",
            "gauge",
            "Duration of the last answered request to the backend (NaN before the first).",
            [("", lastLatency.map { Self.seconds($0) } ?? "NaN")]
        )
        family(
            "auditd_delivered_entries_total",
            "counter",
            "Entries the backend accepted since the agent started.",
            [("", "\(deliveredTotal)")]
        )
        family(
            "auditd_sync_requests_total",
            "counter",
            "Requests sent to the backend since the agent started.",
            [("", "\(requestsTotal)")]
        )
        family(
            "auditd_health",
            "gauge",
            "Delivery health: 1 for the current state (all 0 while unknown).",
            Self.healthStates.map { ("{state=\"\($0)\"}", health == $0 ? "1" : "0") }
        )
        family(
            "auditd_epoch",
            "gauge",
            "Format version 2: the current epoch's number (no sample for a version 1 log).",
            epoch.map { [("", "\($0.number)")] } ?? []
        )
        family(
            "auditd_epoch_start_timestamp_seconds",
            "gauge",
            "Format version 2: when the current epoch began (its epoch record's sealing time), seconds since the epoch.",
            epoch.map { [("", Self.seconds(.milliseconds($0.startsAt.millisecondsSinceEpoch)))] } ?? []
        )
        family(
            "auditd_epoch_stale",
            "gauge",
            "Format version 2: 1 when the current epoch began more than two epoch lengths ago (epochs stopped "
                + "ending; health is then at most degraded), else 0.",
            epoch.map { _ in [("", epochStale ? "1" : "0")] } ?? []
        )
        let lastSuccess = self.lastSuccess.flatMap { AuditTimestamp(rfc3339: $0) }
        family(
            "auditd_last_success_timestamp_seconds",
            "gauge",
            "When the backend last answered, seconds since the epoch (0 if never).",
            [("", lastSuccess.map { Self.seconds(.milliseconds($0.millisecondsSinceEpoch)) } ?? "0")]
        )
        return out
    }

    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        let whole = milliseconds / 1000
        let fraction = abs(milliseconds % 1000)
        return "\(whole).\(String(repeating: "0", count: 3 - String(fraction).count))\(fraction)"
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
