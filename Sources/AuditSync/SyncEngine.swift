import AuditChain
public import Crypto
import Foundation
public import AuditStore
import AuditWire
public import TransparencyLog

/// Delivers the log to the backend: limits, accounted removals, batching, classification, backoff, DLQ replay.
///
/// The decisions are the pure pieces (``DeliveryLimits``, ``SyncClassifier``, ``DeliveryDecider``,
/// ``DeliveryPipeline``, ``EffectiveClock``); this actor does the I/O around them. Each ``cycle()`` is one attempt:
/// every change to the delivery table is committed in the same transaction as the records that account for it.
/// Clocks are injected (``Clocks``), so tests drive hours of outage with a manual clock and no sleeping.
public actor SyncEngine {
    /// What one cycle did.
    public struct CycleReport: Sendable, Hashable {
        /// Whether a batch was sent.
        public var attempted = false
        /// Entries sent (including splits).
        public var sent = 0
        /// Entries the backend accepted or already held.
        public var delivered = 0
        /// Entries moved to the DLQ.
        public var deadLettered = 0
        /// Entries that will be retried after a retryable rejection.
        public var retried = 0
        /// Entries that left delivery, by reason.
        public var removed: [String: Int] = [:]
        /// Accounted-removal records sealed.
        public var recordsSealed = 0
        /// Accounted-removal records refused because the log no longer holds their entries: their rows wait.
        public var recordsRefused = 0
        /// The batch-level failure, if any.
        public var failure: String?
        /// Health after the cycle.
        public var health: DeliveryHealth = .healthy
        /// Entries still pending after the cycle.
        public var pending = 0
        /// Retention pruned the local log up to this sequence number (cumulative), if it ran.
        public var pruned: UInt64?
        /// How far the collector's verified copy is behind after the cycle.
        public var lag = ReceiptLag(deviceHead: nil, collectorHead: nil, since: nil)
    }

    /// Something the engine wants logged (never secrets: sequence numbers, counts, reasons).
    public struct Event: Sendable {
        /// `info`, `warning` or `error`.
        public var level: String
        /// What happened.
        public var message: String
        /// Details.
        public var fields: [String: String]
    }

    let log: AuditLog
    let transport: any SyncTransport
    /// The limits.
    public let policy: DeliveryPolicy
    let clocks: Clocks
    let onEvent: @Sendable (Event) -> Void
    /// The collector's receipt key given by the operator; nil pins the collector's key at first contact.
    let configuredCollectorKey: Curve25519.Signing.PublicKey?
    /// The witnesses whose cosignatures a receipt's checkpoint must carry (docs/WITNESS.md).
    let witnessKeys: [CosignatureVerifierKey]
    /// How many of ``witnessKeys`` must have cosigned a checkpoint for its receipt to be applied.
    let witnessQuorum: Int
    var pipeline = DeliveryPipeline()
    private var clock: EffectiveClock
    var notBefore: [UInt64: Duration] = [:]
    /// Pinned entries (system records, genesis) the collector refused: they wait their own backoff and hold the
    /// health at `failing` until accepted.
    var held: [UInt64: HeldEntry] = [:]
    var replayDue = false
    /// Set when an answer made entries due at once (held entries offered again, a DLQ to offer once more): the run
    /// loop cycles again without waiting for an append or the idle interval.
    var followUp = false
    /// DLQ entries when the cycle began (counted by the limits' load), for ``followUp``.
    private var deadLettersAtStart = 0
    /// The refused accounted removals already logged (each is logged once, not every cycle).
    private var reportedRefusals: Set<String> = []
    private var lastHealth: DeliveryHealth?
    /// The collector trust as this cycle knows it: loaded once per cycle (``loadedTrust()``), then kept up to date
    /// with what the cycle writes; nil between cycles.
    var cycleTrust: CycleTrust?
    /// Duration of the last answered request.
    public private(set) var lastLatency: Duration?
    /// Entries delivered since start.
    public internal(set) var deliveredTotal = 0
    /// Requests sent since start.
    public private(set) var requestsTotal = 0
    private let wake = WakeSignal()

    /// Creates an engine.
    /// - Parameters:
    ///   - log: the log to deliver.
    ///   - transport: how batches reach the backend.
    ///   - policy: the limits.
    ///   - clocks: the monotonic clock, the wall clock and the jitter (``Clocks/system`` unless a test gives its own).
    ///   - collectorKey: the collector's receipt key, when the operator configures it; nil pins the key the
    ///     collector publishes at first contact (trust on first use), kept beside the log.
    ///   - witnessKeys: witnesses whose cosignatures the collector's checkpoints must carry; empty for none.
    ///   - witnessQuorum: how many of `witnessKeys` must have cosigned each checkpoint; nil for all of them.
    ///   - onEvent: receives what the engine wants logged.
    public init(
        log: AuditLog,
        transport: any SyncTransport,
        policy: DeliveryPolicy = .init(),
        clocks: Clocks = .system,
        collectorKey: Curve25519.Signing.PublicKey? = nil,
        witnessKeys: [CosignatureVerifierKey] = [],
        witnessQuorum: Int? = nil,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) throws {
        self.log = log
        self.transport = transport
        self.policy = policy
        self.clocks = clocks
        self.configuredCollectorKey = collectorKey
        self.witnessKeys = Array(Set(witnessKeys))
        self.witnessQuorum = min(max(0, witnessQuorum ?? witnessKeys.count), Set(witnessKeys).count)
        self.onEvent = onEvent
        let persisted = try log.storage.snapshot().metadata[DeliveryStatus.Meta.effectiveTime].flatMap { Int64($0) }
        self.clock = EffectiveClock(tolerance: policy.clockJumpTolerance, persisted: persisted)
    }

    /// Wakes the loop (new entries were appended).
    public nonisolated func notify() { wake.signal() }

    /// The pipeline's state (for tests and metrics).
    public var state: DeliveryPipeline { pipeline }

    /// Pinned entries the collector refuses now (they hold the health at `failing`).
    public var heldCount: Int { held.count }

    /// Runs cycles until the task is cancelled. A cycle in progress finishes its transactions first.
    public func run(idleInterval: Duration = .seconds(2)) async {
        while !Task.isCancelled {
            var report = CycleReport()
            do {
                report = try await cycle()
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                emit("error", "delivery cycle failed", ["error": "\(error)"])
            }
            if Task.isCancelled { break }
            let now = clocks.elapsed
            var wait = idleInterval
            if !pipeline.mayAttempt(at: now) {
                wait = min(wait, pipeline.pausedUntil - now)
                if pipeline.mayProbe(at: now), let probe = policy.reachabilityProbe { wait = min(wait, probe) }
            } else if report.attempted, report.failure == nil, report.sent >= policy.batchSize || followUp {
                wait = .zero
            } else if let next = notBefore.values.min(), next > now {
                wait = min(wait, next - now)
            }
            if wait > .zero { await clocks.wait(for: wake, upTo: wait) }
            await probeIfDown()
        }
    }

    /// While paused by a network-level outage, asks the transport whether the backend is back, and if so ends the
    /// pause so the backlog drains at once. A pause is shortened once at most: a backend that answers the probe but
    /// fails the batch again gets the schedule.
    @discardableResult
    public func probeIfDown() async -> Bool {
        guard policy.reachabilityProbe != nil, pipeline.mayProbe(at: clocks.elapsed) else { return false }
        guard await transport.isReachable() else { return false }
        pipeline.resumeAfterProbe()
        emit("info", "backend reachable again; resuming delivery", [:])
        return true
    }

    /// One attempt: enforce the limits, seal the records owed, send one batch (split on 413), apply the answer.
    @discardableResult
    public func cycle() async throws -> CycleReport {
        let monotonic = clocks.elapsed
        let effective = clock.now(wall: clocks.wallMilliseconds, monotonic: monotonic)
        let mayAttempt = pipeline.mayAttempt(at: monotonic)
        let notDue = Set(notBefore.filter { $0.value > monotonic }.keys)
        let replay = replayDue
        let policy = policy
        let stalled = pipeline.failures > 0 || !held.isEmpty
        var report = CycleReport()
        followUp = false
        // The trust lives for one cycle: another process (`auditctl queue forget-collector`) may change it between
        // cycles, and a check outside a cycle reads it anew.
        cycleTrust = nil
        defer { cycleTrust = nil }

        // Only the rows the limits need are loaded: the cost of a cycle does not grow with the backlog.
        var prepared = try await log.deliveryTransaction(scope: .limits(now: effective, policy: policy)) {
            table,
            sealer in
            var prepared = Prepared()
            prepared.removed = DeliveryLimits.enforce(&table, now: effective, policy: policy)
            DeliveryStatus.addDropped(prepared.removed, stored: sealer.storedMetadata, into: &sealer.metadata)
            // The persisted effective time is only a floor after a restart: a minute's precision is enough, and an
            // idle cycle then commits nothing (no fsync every idle interval).
            let stored = sealer.storedMetadata[DeliveryStatus.Meta.effectiveTime].flatMap { Int64($0) }
            if stored.map({ effective - $0 >= 60_000 }) ?? true {
                sealer.metadata[DeliveryStatus.Meta.effectiveTime] = String(effective)
            }
            // The records travel in the batches that follow: they are pending rows from the commit on. A log that
            // refuses to seal keeps its removed rows waiting for their records, and still delivers the rest.
            // While the collector is not taking entries (an outage, a refused pinned entry) and a system record is
            // already pending, new removals wait: they coalesce into one record per run instead of one per attempt.
            // Past `maxEvents` waiting rows they are sealed anyway (what bounds the rows).
            let undeliveredRecords = table.count(.pending) - table.pendingEvents
            let awaiting = table.count(.removed)
            prepared.deferred = stalled && undeliveredRecords > 0 && awaiting <= policy.maxEvents ? awaiting : 0
            if mayAttempt, prepared.deferred == 0, try sealer.maySeal() {
                for removal in DeliveryLimits.removalRecords(in: table) {
                    do {
                        try sealer.seal(.accountedRemoval(removal))
                        DeliveryLimits.deleteRows(of: removal, from: &table)
                        prepared.recordsSealed += 1
                    } catch let error as LogStoreError where error.code == .corruptState {
                        // Entries deleted behind the log's back: their rows keep waiting (removed, no record), so
                        // they are never accounted for, and the rest of the queue is still delivered.
                        prepared.refused.append(error.message)
                    }
                }
            }
            prepared.pending = table.count(.pending) + prepared.recordsSealed
            prepared.deadLetters = table.count(.dlq)
            return prepared
        }
        if mayAttempt {
            // The batch: the oldest pending entries not waiting out a retry, then (once after a good sync) the DLQ.
            let head = try log.storage.deliveryTable(scope: .head(policy.batchSize + notDue.count))
            prepared.selected = Array(
                head.items(in: .pending).lazy.filter { !notDue.contains($0.seq) }.prefix(policy.batchSize).map(\.seq)
            )
            if replay {
                let dead = head.items(in: .dlq).prefix(max(0, policy.batchSize - prepared.selected.count)).map(\.seq)
                prepared.selected += dead
                prepared.replayed = Set(dead)
            }
        }
        deadLettersAtStart = prepared.deadLetters
        report.removed = prepared.removed
        report.recordsSealed = prepared.recordsSealed
        report.recordsRefused = prepared.refused.count
        for message in prepared.refused where !reportedRefusals.contains(message) {
            emit("error", "an accounted removal was refused", ["error": message])
            reportedRefusals.insert(message)
        }
        report.pending = prepared.pending
        for (reason, count) in prepared.removed where count > 0 {
            emit("warning", "entries left delivery", ["reason": reason, "count": String(count)])
        }
        if mayAttempt, replay { replayDue = false }

        if mayAttempt, !prepared.selected.isEmpty {
            report.attempted = true
            // A batch ends on an entry that carries a signature (format version 2 signs once per commit): the entries
            // after the last one wait for the next batch, so that the collector never holds what it cannot check.
            let entries = Self.endingOnSignature(try log.entries(seqs: prepared.selected))
            // Log id and checkpoint are read once per cycle, not once per (split) request.
            let context = BatchContext(logId: try log.info().logId, checkpoint: try log.latestCheckpoint())
            try await deliver(entries, context, replayed: prepared.replayed, report: &report)
        }
        // Records were delivered while removals waited for them: seal theirs at once.
        if prepared.deferred > 0, report.delivered > 0 { followUp = true }
        if let retention = policy.retention, report.delivered > 0 {
            let cutoff = AuditTimestamp(millisecondsSinceEpoch: effective - retention.milliseconds)
            do {
                if let record = try await log.pruneDelivered(before: cutoff),
                    case .retentionPrune(let removal) = try SystemRecord(
                        kind: record.header.kind,
                        payload: record.payload
                    )
                {
                    report.pruned = removal.lastSeq
                    emit("info", "retention pruned delivered entries", ["through": String(removal.lastSeq)])
                }
            } catch let error as LogStoreError where error.code == .corruptState {
                // Pruning seals its record: a log that refuses to seal keeps its delivered entries for now.
                emit("warning", "retention skipped: the log refuses to seal", ["error": error.message])
            }
        }
        report.lag = try ReceiptLag.read(log.storage, trust: try loadedTrust().trust)
        report.health = pipeline.health(
            pending: report.pending,
            lagging: report.lag.isLagging(now: clocks.wallMilliseconds, policy: policy),
            at: clocks.elapsed,
            policy: policy
        )
        if report.health != lastHealth {
            var fields = ["health": report.health.rawValue]
            if let error = pipeline.lastError { fields["reason"] = error }
            if report.lag.entries > 0 { fields["lagEntries"] = String(report.lag.entries) }
            let level = report.health == .failing ? "critical" : report.health == .healthy ? "info" : "warning"
            emit(level, "delivery health", fields)
            lastHealth = report.health
        }
        try await persistStatus(report)
        return report
    }

    private struct Prepared: Sendable {
        /// Removed rows whose record waits for an earlier system record to be delivered.
        var deferred = 0
        var deadLetters = 0
        var removed: [String: Int] = [:]
        var selected: [UInt64] = []
        var replayed: Set<UInt64> = []
        var recordsSealed = 0
        var refused: [String] = []
        var pending = 0
    }

    struct BatchContext: Sendable {
        var logId: [UInt8]
        var checkpoint: SignedCheckpoint?
    }

    private func deliver(
        _ entries: [StoredEntry],
        _ context: BatchContext,
        replayed: Set<UInt64>,
        report: inout CycleReport
    ) async throws {
        guard !entries.isEmpty else { return }
        let batch = SyncBatch(
            logId: context.logId,
            batchId: SyncWire.batchKey(logId: context.logId, entries: entries.map(\.bytes)),
            entries: entries.map { SyncEntry(seq: $0.seq, bytes: $0.bytes) },
            checkpoint: context.checkpoint,
            treeSize: try loadedTrust().verifiedTreeSize
        )
        let started = clocks.elapsed
        let outcome = await transport.send(batch)
        requestsTotal += 1
        report.sent += entries.count
        let verdict = SyncClassifier.classify(
            outcome,
            now: Date(timeIntervalSince1970: Double(clocks.wallMilliseconds) / 1000),
            maxRetryAfter: policy.maxRetryAfter
        )
        let now = clocks.elapsed
        switch verdict {
        case .answered(let response):
            lastLatency = now - started
            // An answer is acted on only if its receipt verifies: a lying or forked collector's word drops nothing.
            // (Whether the answer ends the outage is decided by `apply`: a refusal of the whole log does not.)
            guard let receiptMetadata = try await trust(response, report: &report) else { return }
            try await apply(
                response,
                sent: Set(entries.map(\.seq)),
                replayed: replayed,
                metadata: receiptMetadata,
                report: &report
            )
            if !receiptMetadata.isEmpty { try adoptTrust(receiptMetadata) }
            if replayed.isEmpty {
                replayDue = true
                // No count query per answer (a pass over the table): the cycle's load counted the DLQ already.
                if deadLettersAtStart + report.deadLettered > 0 { followUp = true }
            }
        case .outage(let reason, let retryAfter):
            var network = false
            if case .failure = outcome { network = true }
            let delay = pipeline.recordOutage(
                at: now,
                reason: reason,
                retryAfter: retryAfter,
                unit: clocks.unit(),
                policy: policy,
                network: network
            )
            report.failure = reason
            emit("warning", "backend unavailable", ["reason": reason, "retryInMs": String(delay.milliseconds)])
        case .unauthorized(let reason):
            pipeline.recordUnauthorized(at: now, reason: reason, policy: policy)
            report.failure = "credentials refused: \(reason)"
            emit("error", "backend refused the credentials; delivery paused", ["reason": reason])
        case .split(let reason):
            lastLatency = now - started
            if entries.count == 1 {
                try await reject(entries[0].seq, reason: reason, replayed: replayed, report: &report)
            } else {
                let half = Self.splitPoint(entries)
                try await deliver(Array(entries[..<half]), context, replayed: replayed, report: &report)
                if pipeline.mayAttempt(at: clocks.elapsed) {
                    try await deliver(Array(entries[half...]), context, replayed: replayed, report: &report)
                }
            }
        }
    }

    /// The batch less the entries after its last entry that carries a signature (format version 2, docs/FORMAT.md
    /// section 13.1); the whole batch when none does (a batch smaller than the log's signing interval, which the
    /// collector refuses until the next signature is sealed and selected with them).
    static func endingOnSignature(_ entries: [StoredEntry]) -> [StoredEntry] {
        guard let last = entries.lastIndex(where: { SealedEntry.carriesSignature(serialized: $0.bytes) }) else {
            return entries
        }
        return Array(entries[...last])
    }

    /// Where to split a refused batch of several entries: after the entry that carries a signature nearest the
    /// middle, so that each half ends on a signature; the middle when only the last entry carries one.
    static func splitPoint(_ entries: [StoredEntry]) -> Int {
        let middle = entries.count / 2
        let signed = entries.indices.dropLast().filter { SealedEntry.carriesSignature(serialized: entries[$0].bytes) }
        guard let nearest = signed.min(by: { abs($0 + 1 - middle) < abs($1 + 1 - middle) }) else { return middle }
        return nearest + 1
    }

    private func persistStatus(_ report: CycleReport) async throws {
        let health = report.health.rawValue
        let error = pipeline.lastError ?? ""
        let metadata = try log.storage.snapshot().metadata
        guard metadata[DeliveryStatus.Meta.health] != health || metadata[DeliveryStatus.Meta.lastError] != error
        else { return }
        _ = try await log.deliveryTransaction(scope: .rows([])) { _, sealer in
            sealer.metadata[DeliveryStatus.Meta.health] = health
            sealer.metadata[DeliveryStatus.Meta.lastError] = error
        }
    }

    func emit(_ level: String, _ message: String, _ fields: [String: String]) {
        onEvent(Event(level: level, message: message, fields: fields))
    }
}
