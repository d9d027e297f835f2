import AuditChain
import AuditServerKit
import AuditWire

extension CollectorMetrics.Snapshot {
    /// The Prometheus text exposition (format 0.0.4): HELP and TYPE lines, then the samples, families in a fixed
    /// order, label values sorted.
    public var text: String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { out += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        let codes = Set(CollectorMetrics.ingestCodes).union(requests.keys).sorted()
        family(
            "auditd_collector_ingest_requests_total",
            "counter",
            "Answers to POST /v1/audit/events, by HTTP status code.",
            codes.map { ("{code=\"\($0)\"}", "\(requests[$0] ?? 0)") }
        )
        family(
            "auditd_collector_entries_received_total",
            "counter",
            "Entries in the batches that reached verification.",
            [("", "\(entriesReceived)")]
        )
        let statuses: [SyncEntryResult.Status] = [.accepted, .duplicate, .rejected]
        family(
            "auditd_collector_entries_total",
            "counter",
            "Per-entry results: accepted (stored now), duplicate (held already), rejected.",
            statuses.map { ("{result=\"\($0.rawValue)\"}", "\(entries[$0] ?? 0)") }
        )
        family(
            "auditd_collector_rejected_entries_total",
            "counter",
            "Rejected entries, by reason: malformed, invalid, fork, chainBreak, unknownKey (retryable), other.",
            RejectionReason.allCases.map { ("{reason=\"\($0.rawValue)\"}", "\(rejected[$0] ?? 0)") }
        )
        family(
            "auditd_collector_ingest_duration_seconds",
            "histogram",
            "Time to verify, store and answer one batch (from its decoding to its signed answer).",
            Self.histogram(durationCounts, sum: durationSum, buckets: CollectorMetrics.durationBuckets)
        )
        family(
            "auditd_collector_verify_duration_seconds",
            "histogram",
            "Of a batch's ingest time, the time spent verifying its entries (parsing, hashes, signatures, chain "
                + "decisions), without the database.",
            Self.histogram(
                verifyDurationCounts,
                sum: verifyDurationSum,
                buckets: CollectorMetrics.verifyDurationBuckets
            )
        )
        let logIds = logs.keys.sorted()
        family(
            "auditd_collector_log_lag_entries",
            "gauge",
            "Per log seen recently: how far the highest entry this replica saw held is above the contiguous head.",
            logIds.map { ("{log=\"\($0)\"}", "\(logs[$0]?.lag ?? 0)") }
        )
        family(
            "auditd_collector_log_head_age_seconds",
            "gauge",
            "Per log seen recently: seconds since this replica saw the log's contiguous head advance.",
            logIds.map { ("{log=\"\($0)\"}", Self.number(((logs[$0]?.headAgeSeconds ?? 0) * 1000).rounded() / 1000)) }
        )
        let epochLogs = logEpochs.keys.sorted()
        family(
            "auditd_collector_log_epoch",
            "gauge",
            "Per format version 2 log seen recently: its current epoch's number, as held up to its contiguous head.",
            epochLogs.map { ("{log=\"\($0)\"}", "\(logEpochs[$0]?.state.number ?? 0)") }
        )
        family(
            "auditd_collector_log_epoch_age_seconds",
            "gauge",
            "Per format version 2 log seen recently: seconds since its current epoch began (the sealing time of its "
                + "latest epoch record or genesis, the device's clock).",
            epochLogs.map { log in
                let began = logEpochs[log]?.state.startsAt.millisecondsSinceEpoch ?? wallTime.millisecondsSinceEpoch
                let (age, overflow) = wallTime.millisecondsSinceEpoch.subtractingReportingOverflow(began)
                return ("{log=\"\(log)\"}", Self.number(overflow ? 0 : Double(age) / 1000))
            }
        )
        family(
            "auditd_collector_log_epoch_stale",
            "gauge",
            "Per format version 2 log seen recently: 1 when it is not closed and its current epoch began more than two "
                + "epoch lengths ago (its agent sends, but its epochs stopped ending), else 0.",
            epochLogs.map { ("{log=\"\($0)\"}", logEpochs[$0]?.isStale(at: wallTime) == true ? "1" : "0") }
        )
        family(
            "auditd_collector_tracked_logs",
            "gauge",
            "Logs with per-log series (seen within the window, at most the cap).",
            [("", "\(logs.count)")]
        )
        family(
            "auditd_collector_log_series_evicted_total",
            "counter",
            "Logs whose per-log series were dropped to stay within the cap.",
            [("", "\(logsEvicted)")]
        )
        let listeners = connections.keys.sorted()
        family(
            "auditd_collector_open_connections",
            "gauge",
            "Connections held, by listener.",
            listeners.map { ("{listener=\"\($0)\"}", "\(connections[$0]?.open ?? 0)") }
        )
        family(
            "auditd_collector_idle_connections",
            "gauge",
            "Connections waiting for a request head (new or idle keep-alive), by listener.",
            listeners.map { ("{listener=\"\($0)\"}", "\(connections[$0]?.awaitingRequest ?? 0)") }
        )
        family(
            "auditd_collector_connections_total",
            "counter",
            "Connections by listener and outcome: admitted, refused (every held one busy), evicted (to make room), "
                + "timedOut (a request head, body or the next request late).",
            listeners.flatMap { listener -> [(labels: String, value: String)] in
                guard let stats = connections[listener] else { return [] }
                return [
                    ("admitted", stats.admitted), ("refused", stats.refused), ("evicted", stats.evicted),
                    ("timedOut", stats.timedOut),
                ].map { ("{listener=\"\(listener)\",outcome=\"\($0.0)\"}", "\($0.1)") }
            }
        )
        family(
            "auditd_collector_draining",
            "gauge",
            "1 while the collector drains after SIGTERM (/readyz answers 503), else 0.",
            [("", draining ? "1" : "0")]
        )
        return out
    }

    /// A histogram's samples, suffixes and labels of the family's name: cumulative `_bucket`s by `le` (the
    /// bounds, then `+Inf`), `_sum` and `_count`.
    static func histogram(_ counts: [Int], sum: Double, buckets: [Double]) -> [(labels: String, value: String)] {
        var samples: [(labels: String, value: String)] = []
        var cumulative = 0
        for (index, count) in counts.enumerated() {
            cumulative += count
            let bound = index < buckets.count ? number(buckets[index]) : "+Inf"
            samples.append(("_bucket{le=\"\(bound)\"}", "\(cumulative)"))
        }
        samples.append(("_sum", number(sum)))
        samples.append(("_count", "\(cumulative)"))
        return samples
    }

    /// A sample value: integers without a fraction, others as Swift prints them (which Prometheus parses).
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value > 0 ? "+Inf" : "-Inf") }
        if value == value.rounded(), abs(value) < 1e15 { return "\(Int64(value))" }
        return "\(value)"
    }
}
