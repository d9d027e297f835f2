import AuditChain
import AuditCollector
import AuditServerKit
import AuditWire
import Crypto
import Foundation
import Testing
import TestKit

/// The collector's Prometheus metrics: the exposition parses, and the counters follow what ingest did.
@Suite struct CollectorMetricsTests {
    /// A parsed text exposition (format 0.0.4): each family's type, and each sample by `name{labels}`.
    struct Exposition {
        var types: [String: String] = [:]
        var helps: Set<String> = []
        var samples: [String: Double] = [:]

        init(parsing text: String) throws {
            #expect(text.hasSuffix("\n"))
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                let words = line.split(separator: " ", maxSplits: 3).map(String.init)
                if line.hasPrefix("# HELP ") {
                    helps.insert(words[2])
                } else if line.hasPrefix("# TYPE ") {
                    #expect(["counter", "gauge", "histogram"].contains(words[3]))
                    #expect(types[words[2]] == nil, "family \(words[2]) declared twice")
                    types[words[2]] = words[3]
                } else {
                    let parts = line.split(separator: " ").map(String.init)
                    try #require(parts.count == 2, "sample line \(line)")
                    let value = try #require(Double(parts[1].replacingOccurrences(of: "+Inf", with: "inf")))
                    let name = String(parts[0].prefix { $0 != "{" })
                    let family = types[name] != nil ? name : Self.histogramFamily(name)
                    #expect(types[family] != nil, "sample \(name) has no TYPE line before it")
                    #expect(helps.contains(family))
                    #expect(samples[parts[0]] == nil, "sample \(parts[0]) twice")
                    samples[parts[0]] = value
                }
            }
        }

        static func histogramFamily(_ name: String) -> String {
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                return String(name.dropLast(suffix.count))
            }
            return name
        }

        subscript(_ key: String) -> Double? { samples[key] }
    }

    @Test func countersFollowIngestAcceptedDuplicateAndRefusedEntries() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(6)
        var operations = CollectorOperations()
        operations.metrics = .init(host: "127.0.0.1", port: 0)
        try await withOperatedCollector(directory, token: "t0ken", operations: operations) { api, metrics, _ in
            let metrics = try #require(metrics)
            let before = try Exposition(
                parsing: String(decoding: try await metrics.send("GET", "/metrics").body, as: UTF8.self)
            )
            #expect(before["auditd_collector_entries_total{result=\"accepted\"}"] == 0)
            #expect(before["auditd_collector_ingest_requests_total{code=\"200\"}"] == 0)
            #expect(before["auditd_collector_ingest_duration_seconds_count"] == 0)
            #expect(before["auditd_collector_verify_duration_seconds_count"] == 0)

            #expect(try await api.post(chain.batch([0, 1, 2, 3])).response?.summary.count == 4)
            let overlap = try #require(try await api.post(chain.batch([2, 3, 4])).response)
            #expect(overlap.summary == ["2:duplicate:200", "3:duplicate:200", "4:accepted:200"])
            let fork = chain.offChain(after: chain.head(at: 1))
            let refused = SyncBatch(
                logId: chain.logId,
                batchId: "refused-batch",
                entries: [SyncEntry(seq: 2, bytes: fork.serialized), SyncEntry(seq: 5, bytes: [1, 2, 3])],
                checkpoint: nil
            )
            let refusedAnswer = try #require(try await api.post(refused).response)
            #expect(refusedAnswer.summary == ["2:rejected:409", "5:rejected:400"])
            // Seq 6 past the gap at 5: held, not covered by the head (4).
            #expect(try await api.post(chain.batch([6])).response?.treeReceipt?.seq == 4)
            #expect(try await CollectorClient(port: api.port, token: nil).post(chain.batch([5])).status == 401)

            let reply = try await metrics.send("GET", "/metrics")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == CollectorMetrics.contentType)
            let after = try Exposition(parsing: String(decoding: reply.body, as: UTF8.self))
            #expect(after["auditd_collector_ingest_requests_total{code=\"200\"}"] == 4)
            #expect(after["auditd_collector_ingest_requests_total{code=\"401\"}"] == 1)
            #expect(after["auditd_collector_entries_received_total"] == 10)
            #expect(after["auditd_collector_entries_total{result=\"accepted\"}"] == 6)
            #expect(after["auditd_collector_entries_total{result=\"duplicate\"}"] == 2)
            #expect(after["auditd_collector_entries_total{result=\"rejected\"}"] == 2)
            #expect(after["auditd_collector_rejected_entries_total{reason=\"fork\"}"] == 1)
            #expect(after["auditd_collector_rejected_entries_total{reason=\"malformed\"}"] == 1)
            #expect(after["auditd_collector_rejected_entries_total{reason=\"invalid\"}"] == 0)
            #expect(after.types["auditd_collector_ingest_duration_seconds"] == "histogram")
            #expect(after["auditd_collector_ingest_duration_seconds_count"] == 4)
            #expect(after["auditd_collector_ingest_duration_seconds_bucket{le=\"+Inf\"}"] == 4)
            #expect((after["auditd_collector_ingest_duration_seconds_sum"] ?? -1) > 0)
            // Verifying is part of each of the four batches' ingest, timed inside it.
            #expect(after.types["auditd_collector_verify_duration_seconds"] == "histogram")
            #expect(after["auditd_collector_verify_duration_seconds_count"] == 4)
            #expect(after["auditd_collector_verify_duration_seconds_bucket{le=\"+Inf\"}"] == 4)
            let verifySum = try #require(after["auditd_collector_verify_duration_seconds_sum"])
            #expect(verifySum > 0)
            #expect(verifySum <= (after["auditd_collector_ingest_duration_seconds_sum"] ?? 0))
            let log = Hex.encode(chain.logId)
            #expect(after["auditd_collector_log_lag_entries{log=\"\(log)\"}"] == 2)
            #expect((after["auditd_collector_log_head_age_seconds{log=\"\(log)\"}"] ?? -1) >= 0)
            #expect(after["auditd_collector_tracked_logs"] == 1)
            #expect((after["auditd_collector_connections_total{listener=\"api\",outcome=\"admitted\"}"] ?? 0) >= 1)
            #expect((after["auditd_collector_open_connections{listener=\"metrics\"}"] ?? 0) >= 1)
            #expect(after["auditd_collector_draining"] == 0)
        }
    }

    @Test func theHistogramIsCumulativeAndEveryFamilyIsTyped() throws {
        let metrics = CollectorMetrics()
        let now = ContinuousClock.now
        let logId = [UInt8](repeating: 0xab, count: 16)
        let accepted = [SyncEntryResult(seq: 0, status: .accepted)]
        for milliseconds in [1, 7, 7, 300, 20_000] {
            metrics.ingested(logId: logId, results: accepted, head: 0, duration: .milliseconds(milliseconds), at: now)
        }
        metrics.ingestFailed(duration: .milliseconds(40))
        metrics.countRequest(code: 418)
        let text = metrics.snapshot(at: now).text
        let exposition = try Exposition(parsing: text)
        let bucket = { (bound: String) in exposition["auditd_collector_ingest_duration_seconds_bucket{le=\"\(bound)\"}"]
        }
        #expect(bucket("0.005") == 1)
        #expect(bucket("0.01") == 3)
        #expect(bucket("0.05") == 4)
        #expect(bucket("0.25") == 4)
        #expect(bucket("0.5") == 5)
        #expect(bucket("10") == 5)
        #expect(bucket("+Inf") == 6)
        #expect(exposition["auditd_collector_ingest_duration_seconds_count"] == 6)
        #expect(abs((exposition["auditd_collector_ingest_duration_seconds_sum"] ?? 0) - 20.355) < 1e-9)
        #expect(exposition["auditd_collector_ingest_requests_total{code=\"418\"}"] == 1)
        #expect(exposition["auditd_collector_ingest_requests_total{code=\"503\"}"] == 0)
        for reason in RejectionReason.allCases {
            #expect(exposition["auditd_collector_rejected_entries_total{reason=\"\(reason.rawValue)\"}"] == 0)
        }
        #expect(exposition["auditd_collector_log_lag_entries{log=\"\(Hex.encode(logId))\"}"] == 0)
    }

    @Test func theVerifyHistogramHasItsOwnBucketsAndSkipsBatchesWithoutEntries() throws {
        let metrics = CollectorMetrics()
        let now = ContinuousClock.now
        let logId = [UInt8](repeating: 0xcd, count: 16)
        let accepted = [SyncEntryResult(seq: 0, status: .accepted)]
        for microseconds in [200, 500, 900, 30_000, 2_000_000] {
            metrics.ingested(
                logId: logId,
                results: accepted,
                head: 0,
                duration: .microseconds(microseconds) + .milliseconds(5),
                verifyDuration: .microseconds(microseconds),
                at: now
            )
        }
        // A batch with no entries verified nothing: the ingest histogram observes it, the verify histogram does not.
        metrics.ingested(logId: logId, results: [], head: 0, duration: .milliseconds(2), verifyDuration: nil, at: now)
        let snapshot = metrics.snapshot(at: now)
        #expect(snapshot.durationCount == 6)
        #expect(snapshot.verifyDurationCount == 5)
        let exposition = try Exposition(parsing: snapshot.text)
        let bucket = { (bound: String) in
            exposition["auditd_collector_verify_duration_seconds_bucket{le=\"\(bound)\"}"]
        }
        #expect(bucket("0.0005") == 2)
        #expect(bucket("0.001") == 3)
        #expect(bucket("0.025") == 3)
        #expect(bucket("0.05") == 4)
        #expect(bucket("1") == 4)
        #expect(bucket("+Inf") == 5)
        #expect(exposition["auditd_collector_verify_duration_seconds_count"] == 5)
        #expect(abs((exposition["auditd_collector_verify_duration_seconds_sum"] ?? 0) - 2.0316) < 1e-9)
        #expect(exposition["auditd_collector_ingest_duration_seconds_count"] == 6)
    }

    @Test func theCollectorReportsVerifyTimeForBatchesWithEntriesOnly() async throws {
        let directory = CollectorTempDir()
        let collector = Collector(store: try CollectorStore(path: directory.database), receiptKey: .generate())
        var chain = CollectorChain()
        chain.appendEvents(20)
        let stored = try await collector.ingestReporting(chain.batch(Array(0...20)))
        #expect(stored.response.results.allSatisfy { $0.status == .accepted })
        let verified = try #require(stored.verifyDuration)
        #expect(verified > .zero)
        // Duplicates are compared with what is held, not verified again, but are still timed.
        #expect(try await collector.ingestReporting(chain.batch(Array(0...20))).verifyDuration != nil)
        let empty = SyncBatch(logId: chain.logId, batchId: "empty", entries: [], checkpoint: nil)
        #expect(try await collector.ingestReporting(empty).verifyDuration == nil)
    }

    @Test func perLogSeriesAreBoundedInTimeAndNumber() throws {
        let metrics = CollectorMetrics(logSeriesWindow: .seconds(600), maxLogSeries: 3)
        let start = ContinuousClock.now
        func log(_ index: UInt8) -> [UInt8] { [UInt8](repeating: index, count: 16) }
        func results(_ seqs: ClosedRange<UInt64>) -> [SyncEntryResult] {
            seqs.map { SyncEntryResult(seq: $0, status: .accepted) }
        }
        for index in UInt8(1)...4 {
            metrics.ingested(
                logId: log(index),
                results: results(0...9),
                head: 4,
                duration: .zero,
                at: start + .seconds(Int(index))
            )
        }
        var snapshot = metrics.snapshot(at: start + .seconds(10))
        // The least recently seen log (1) made room for the fourth.
        #expect(Set(snapshot.logs.keys) == Set([2, 3, 4].map { Hex.encode(log($0)) }))
        #expect(snapshot.logsEvicted == 1)
        #expect(snapshot.logs[Hex.encode(log(4))]?.lag == 5)
        #expect(snapshot.logs[Hex.encode(log(2))]?.headAgeSeconds == 8)
        // The head advances for log 2: its lag shrinks and its age starts again; a gap-only batch does not move it.
        metrics.ingested(logId: log(2), results: results(10...10), head: 10, duration: .zero, at: start + .seconds(20))
        metrics.ingested(logId: log(3), results: results(12...12), head: 4, duration: .zero, at: start + .seconds(20))
        snapshot = metrics.snapshot(at: start + .seconds(30))
        #expect(snapshot.logs[Hex.encode(log(2))]?.lag == 0)
        #expect(snapshot.logs[Hex.encode(log(2))]?.headAgeSeconds == 10)
        #expect(snapshot.logs[Hex.encode(log(3))]?.lag == 8)
        #expect(snapshot.logs[Hex.encode(log(3))]?.headAgeSeconds == 27)
        // Past the window, logs not seen are forgotten.
        snapshot = metrics.snapshot(at: start + .seconds(615))
        #expect(Set(snapshot.logs.keys) == Set([2, 3].map { Hex.encode(log($0)) }))
        #expect(metrics.snapshot(at: start + .seconds(700)).logs.isEmpty)
        #expect(
            try Exposition(parsing: metrics.snapshot(at: start + .seconds(700)).text)["auditd_collector_tracked_logs"]
                == 0
        )
    }

    @Test func perLogEpochSeriesFollowTheEpochsHeldUpToTheHead() async throws {
        let directory = CollectorTempDir()
        var operations = CollectorOperations()
        operations.metrics = .init(host: "127.0.0.1", port: 0)
        // A version 2 log whose genesis was sealed days ago (the fixture's clock), with 10 min epochs: stale until
        // its next epoch.
        var v2 = CollectorChain(deviceId: "device-v2", epochSeconds: 600)
        v2.appendEvents(1)
        var v1 = CollectorChain()
        v1.appendEvents(2)
        try await withOperatedCollector(directory, token: "t0ken", operations: operations) { api, metrics, _ in
            let metrics = try #require(metrics)
            func scrape() async throws -> Exposition {
                try Exposition(parsing: String(decoding: try await metrics.send("GET", "/metrics").body, as: UTF8.self))
            }
            let log = Hex.encode(v2.logId)
            #expect(try await api.post(v2.batch()).response?.summary.count == 2)
            #expect(try await api.post(v1.batch([0, 1, 2])).response?.summary.count == 3)
            var exposition = try await scrape()
            #expect(exposition["auditd_collector_log_epoch{log=\"\(log)\"}"] == 0)
            #expect(exposition["auditd_collector_log_epoch_stale{log=\"\(log)\"}"] == 1)
            #expect((exposition["auditd_collector_log_epoch_age_seconds{log=\"\(log)\"}"] ?? 0) >= 1_200)
            // A version 1 log has no epoch series.
            #expect(exposition["auditd_collector_log_epoch{log=\"\(Hex.encode(v1.logId))\"}"] == nil)
            #expect(exposition.types["auditd_collector_log_epoch_stale"] == "gauge")

            // The epoch record arrives: the log is fresh again, in epoch 1.
            v2.endEpoch(at: .now())
            #expect(try await api.post(v2.batch([2])).response?.summary == ["2:accepted:200"])
            exposition = try await scrape()
            #expect(exposition["auditd_collector_log_epoch{log=\"\(log)\"}"] == 1)
            #expect(exposition["auditd_collector_log_epoch_stale{log=\"\(log)\"}"] == 0)
            #expect((exposition["auditd_collector_log_epoch_age_seconds{log=\"\(log)\"}"] ?? 1_200) < 1_200)
        }
    }

    @Test func aReplicaReadsALogsEpochOnceAndAgainOnlyWhenABatchMovesIt() {
        let metrics = CollectorMetrics()
        let log: [UInt8] = Array(repeating: 7, count: 16)
        func entry(_ kind: RecordKind) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: FormatConstants.headerSize)
            bytes[5] = kind.rawValue
            return bytes
        }
        // Not kept yet (no batch recorded): nothing to read.
        #expect(!metrics.wantsEpoch(logId: log, stored: [entry(.event)]))
        metrics.ingested(logId: log, results: [SyncEntryResult(seq: 0, status: .accepted)], head: 0, duration: .zero)
        #expect(metrics.wantsEpoch(logId: log, stored: []))
        let state = ChainRules.EpochState(
            number: 3,
            startsAt: AuditTimestamp(millisecondsSinceEpoch: 1_000),
            epochSeconds: 600,
            recordSeq: 9
        )
        metrics.observed(epoch: LogStatus.Epoch(state: state, closed: false), logId: log)
        #expect(!metrics.wantsEpoch(logId: log, stored: [entry(.event), entry(.checkpoint)]))
        for kind in [RecordKind.genesis, .epoch, .close, .crashRecovery] {
            #expect(metrics.wantsEpoch(logId: log, stored: [entry(.event), entry(kind)]))
        }
        // Closed: the next stored entry is a new run's.
        metrics.observed(epoch: LogStatus.Epoch(state: state, closed: true), logId: log)
        #expect(metrics.wantsEpoch(logId: log, stored: [entry(.event)]))
        #expect(!metrics.wantsEpoch(logId: log, stored: []))
        // A version 1 log: read once, nil, and not again for events.
        let v1: [UInt8] = Array(repeating: 8, count: 16)
        metrics.ingested(logId: v1, results: [SyncEntryResult(seq: 0, status: .accepted)], head: 0, duration: .zero)
        metrics.observed(epoch: nil, logId: v1)
        #expect(!metrics.wantsEpoch(logId: v1, stored: [entry(.event)]))
        let snapshot = metrics.snapshot(wallTime: AuditTimestamp(millisecondsSinceEpoch: 1_201_001))
        #expect(snapshot.logEpochs.count == 1)
        #expect(snapshot.text.contains("auditd_collector_log_epoch_stale{log=\"\(Hex.encode(log))\"} 0\n"))
        #expect(snapshot.text.contains("auditd_collector_log_epoch_age_seconds{log=\"\(Hex.encode(log))\"} 1200.001\n"))
    }

    @Test func rejectionsAreClassedByCodeAndReason() {
        func reason(_ code: Int, _ text: String = "") -> RejectionReason? {
            RejectionReason(SyncEntryResult(seq: 1, status: .rejected, code: code, reason: text))
        }
        #expect(reason(400) == .malformed)
        #expect(reason(422) == .invalid)
        #expect(reason(409, "fork: the collector holds another entry at seq 1") == .fork)
        #expect(reason(409, "chain break: ...") == .chainBreak)
        #expect(reason(503) == .unknownKey)
        #expect(reason(500) == .other)
        #expect(RejectionReason(SyncEntryResult(seq: 1, status: .duplicate)) == nil)
    }
}
