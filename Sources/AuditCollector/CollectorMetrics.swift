public import AuditServerKit
public import AuditWire
public import AuditChain
import Synchronization

/// What this collector process did since it started, for Prometheus (`GET /metrics` on the metrics listener;
/// docs/PROTOCOL.md section 7 lists every metric). Counters live in memory, per replica: Prometheus sums them across
/// replicas. Recording takes a lock for a few additions; rendering happens on a scrape.
public final class CollectorMetrics: Sendable {
    /// The content type of the exposition (text format 0.0.4).
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    /// The upper bounds of the ingest duration histogram's buckets, in seconds (`+Inf` follows).
    public static let durationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// The upper bounds of the verify duration histogram's buckets, in seconds (`+Inf` follows): one entry's
    /// signature takes about 50 µs of a core, a batch of 1 000 on two cores about 25 ms.
    public static let verifyDurationBuckets: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
    ]
    /// The ingest answers always exported (0 until they happen), so that `rate()` sees them from the start.
    public static let ingestCodes = [200, 400, 401, 413, 415, 503]

    /// The values at one instant, with the listeners' connections and the drain state.
    public struct Snapshot: Sendable {
        /// `POST /v1/audit/events` answers, by HTTP status code.
        public var requests: [Int: Int] = [:]
        /// Entries in the batches that reached verification.
        public var entriesReceived = 0
        /// Per-entry results, by status.
        public var entries: [SyncEntryResult.Status: Int] = [:]
        /// Rejected entries, by class.
        public var rejected: [RejectionReason: Int] = [:]
        /// Batches per duration bucket (not cumulative; the last one is `+Inf`).
        public var durationCounts = [Int](repeating: 0, count: CollectorMetrics.durationBuckets.count + 1)
        /// Total ingest duration, in seconds.
        public var durationSum = 0.0
        /// Batches per verify duration bucket (not cumulative; the last one is `+Inf`).
        public var verifyDurationCounts = [Int](repeating: 0, count: CollectorMetrics.verifyDurationBuckets.count + 1)
        /// Total time spent verifying batches' entries, in seconds.
        public var verifyDurationSum = 0.0
        /// Per-log lag (entries) and head age (seconds), by hex log id.
        public var logs: [String: (lag: UInt64, headAgeSeconds: Double)] = [:]
        /// Per format version 2 log: its epochs as last read, by hex log id.
        public var logEpochs: [String: LogStatus.Epoch] = [:]
        /// The wall time of the snapshot (what the epochs' age and staleness are judged at).
        public var wallTime = AuditTimestamp(millisecondsSinceEpoch: 0)
        /// Logs whose series were dropped to stay within the cap.
        public var logsEvicted = 0
        /// Connection statistics, by listener name.
        public var connections: [String: ConnectionTable.Stats] = [:]
        /// Whether the collector is draining.
        public var draining = false

        /// Batches observed by the histogram.
        public var durationCount: Int { durationCounts.reduce(0, +) }
        /// Batches observed by the verify histogram.
        public var verifyDurationCount: Int { verifyDurationCounts.reduce(0, +) }
    }

    private struct State {
        var snapshot = Snapshot()
        var logs: LogLagTable
    }

    private let state: Mutex<State>

    /// Creates the metrics of one collector process.
    /// - Parameters:
    ///   - logSeriesWindow: per-log series are kept for logs seen within this window.
    ///   - maxLogSeries: at most this many logs have per-log series.
    public init(logSeriesWindow: Duration = .seconds(600), maxLogSeries: Int = 100) {
        state = Mutex(State(logs: LogLagTable(window: logSeriesWindow, capacity: maxLogSeries)))
    }

    /// Counts an answer to `POST /v1/audit/events`.
    public func countRequest(code: Int) {
        state.withLock { $0.snapshot.requests[code, default: 0] += 1 }
    }

    /// Counts the entries of a batch that reaches verification.
    public func received(entries: Int) {
        state.withLock { $0.snapshot.entriesReceived += entries }
    }

    /// Records a processed batch: its per-entry results, the log's head after it and how long it took.
    /// - Parameters:
    ///   - logId: the batch's log.
    ///   - results: one result per entry.
    ///   - head: the log's contiguous head after the batch (nil: none yet).
    ///   - duration: verification, storage and the answer's signature.
    ///   - verifyDuration: of `duration`, the time spent verifying the entries (parsing, hashes, signatures and
    ///     the chain decisions), without the database's reads and writes; nil for a batch with no entries, which
    ///     the verify histogram does not observe.
    ///   - now: the time of the per-log series.
    public func ingested(
        logId: [UInt8],
        results: [SyncEntryResult],
        head: UInt64?,
        duration: Duration,
        verifyDuration: Duration? = nil,
        at now: ContinuousClock.Instant = .now
    ) {
        var highestHeld: UInt64?
        for result in results where result.status != .rejected { highestHeld = max(highestHeld ?? 0, result.seq) }
        let log = Hex.encode(logId)
        state.withLock { state in
            for result in results {
                state.snapshot.entries[result.status, default: 0] += 1
                if let reason = RejectionReason(result) { state.snapshot.rejected[reason, default: 0] += 1 }
            }
            Self.observe(duration, &state.snapshot)
            if let verifyDuration {
                Self.observe(
                    verifyDuration,
                    buckets: Self.verifyDurationBuckets,
                    counts: &state.snapshot.verifyDurationCounts,
                    sum: &state.snapshot.verifyDurationSum
                )
            }
            state.logs.record(log: log, highestHeld: highestHeld, head: head, at: now)
        }
    }

    /// Whether the log's epoch must be read from the database after a batch that stored `stored` (serialized
    /// entries): see ``LogLagTable/wantsEpoch(log:storedKinds:)``.
    public func wantsEpoch(logId: [UInt8], stored: [[UInt8]]) -> Bool {
        let kinds = stored.compactMap { bytes in bytes.count > 5 ? RecordKind(rawValue: bytes[5]) : nil }
        return state.withLock { $0.logs.wantsEpoch(log: Hex.encode(logId), storedKinds: kinds) }
    }

    /// Keeps a log's epochs as read from the database, for its per-log epoch series.
    public func observed(epoch: LogStatus.Epoch?, logId: [UInt8]) {
        state.withLock { $0.logs.setEpoch(log: Hex.encode(logId), epoch) }
    }

    /// Records a batch whose storage failed, after `duration`.
    public func ingestFailed(duration: Duration) {
        state.withLock { Self.observe(duration, &$0.snapshot) }
    }

    /// The values now, with the listeners' connection statistics and the drain state.
    public func snapshot(
        connections: [String: ConnectionTable.Stats] = [:],
        draining: Bool = false,
        at now: ContinuousClock.Instant = .now,
        wallTime: AuditTimestamp = .now()
    ) -> Snapshot {
        state.withLock { state in
            state.logs.expire(at: now)
            var snapshot = state.snapshot
            snapshot.logs = state.logs.entries.mapValues { entry in
                (entry.lag, Self.seconds(now - entry.headMoved))
            }
            snapshot.logEpochs = state.logs.entries.compactMapValues(\.epoch)
            snapshot.wallTime = wallTime
            snapshot.logsEvicted = state.logs.evicted
            snapshot.connections = connections
            snapshot.draining = draining
            return snapshot
        }
    }

    private static func observe(_ duration: Duration, _ snapshot: inout Snapshot) {
        observe(duration, buckets: durationBuckets, counts: &snapshot.durationCounts, sum: &snapshot.durationSum)
    }

    /// Adds one observation to a histogram: one to the first bucket whose bound is at least `duration` (or to
    /// `+Inf`, the last), and `duration` to the sum.
    private static func observe(_ duration: Duration, buckets: [Double], counts: inout [Int], sum: inout Double) {
        let seconds = Self.seconds(duration)
        let bucket = buckets.firstIndex { seconds <= $0 } ?? buckets.count
        counts[bucket] += 1
        sum += seconds
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
