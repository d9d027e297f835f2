import AuditChain
import Foundation

/// Delivers the log to the backend: limits, accounted removals, batching, classification, backoff, DLQ replay.
///
/// The decisions are the pure pieces (``DeliveryLimits``, ``SyncClassifier``, ``DeliveryPipeline``,
/// ``EffectiveClock``); this actor does the I/O around them. Each ``cycle()`` is one attempt: every change to the
/// delivery table is committed in the same transaction as the records that account for it. Clocks are injected,
/// so tests drive hours of outage with a manual clock and no sleeping.
public actor SyncEngine {
    /// The clocks and randomness the engine reads.
    public struct Clocks: Sendable {
        /// Monotonic time (backoff, outage duration).
        public var monotonic: @Sendable () -> Duration
        /// Wall time in milliseconds since the epoch (expiry, with the clock-jump rule).
        public var wall: @Sendable () -> Int64
        /// A random number in 0 ..< 1 (jitter).
        public var random: @Sendable () -> Double

        /// Creates clocks.
        public init(
            monotonic: @escaping @Sendable () -> Duration,
            wall: @escaping @Sendable () -> Int64,
            random: @escaping @Sendable () -> Double
        ) {
            self.monotonic = monotonic
            self.wall = wall
            self.random = random
        }

        /// The system's clocks.
        public static var system: Clocks {
            let origin = ContinuousClock.now
            return Clocks(
                monotonic: { ContinuousClock.now - origin },
                wall: { Int64(Date().timeIntervalSince1970 * 1000) },
                random: { Double.random(in: 0..<1) }
            )
        }
    }

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
    private var pipeline = DeliveryPipeline()
    private var clock: EffectiveClock
    private var notBefore: [UInt64: Duration] = [:]
    private var replayDue = false
    /// The refused accounted removals already logged (each is logged once, not every cycle).
    private var reportedRefusals: Set<String> = []
    private var lastHealth: DeliveryHealth?
    /// Duration of the last answered request.
    public private(set) var lastLatency: Duration?
    /// Entries delivered since start.
    public private(set) var deliveredTotal = 0
    /// Requests sent since start.
    public private(set) var requestsTotal = 0
    private let wake = WakeSignal()

    /// Creates an engine.
    /// - Parameters:
    ///   - log: the log to deliver.
    ///   - transport: how batches reach the backend.
    ///   - policy: the limits.
    ///   - clocks: injected clocks.
    ///   - onEvent: receives what the engine wants logged.
    public init(
        log: AuditLog,
        transport: any SyncTransport,
        policy: DeliveryPolicy = .init(),
        clocks: Clocks = .system,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) throws {
        self.log = log
        self.transport = transport
        self.policy = policy
        self.clocks = clocks
        self.onEvent = onEvent
        let persisted = try log.storage.snapshot().metadata[DeliveryStatus.Meta.effectiveTime].flatMap { Int64($0) }
        self.clock = EffectiveClock(tolerance: policy.clockJumpTolerance, persisted: persisted)
    }

    /// Wakes the loop (new entries were appended).
    public nonisolated func notify() { wake.signal() }

    /// The pipeline's state (for tests and metrics).
    public var state: DeliveryPipeline { pipeline }

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
            let now = clocks.monotonic()
            var wait = idleInterval
            if !pipeline.mayAttempt(at: now) {
                wait = min(wait, pipeline.pausedUntil - now)
                if pipeline.networkDown, let probe = policy.reachabilityProbe { wait = min(wait, probe) }
            } else if report.attempted, report.failure == nil, report.sent >= policy.batchSize {
                wait = .zero
            } else if let next = notBefore.values.min(), next > now {
                wait = min(wait, next - now)
            }
            if wait > .zero { await self.wake.wait(upTo: wait) }
            await probeIfDown()
        }
    }

    /// While paused by a network-level outage, asks the transport whether the backend is back, and if so ends the
    /// pause so the backlog drains at once.
    @discardableResult
    public func probeIfDown() async -> Bool {
        guard policy.reachabilityProbe != nil, pipeline.networkDown, !pipeline.mayAttempt(at: clocks.monotonic())
        else { return false }
        guard await transport.isReachable() else { return false }
        pipeline.resumeAfterProbe()
        emit("info", "backend reachable again; resuming delivery", [:])
        return true
    }

    /// One attempt: enforce the limits, seal the records owed, send one batch (split on 413), apply the answer.
    @discardableResult
    public func cycle() async throws -> CycleReport {
        let monotonic = clocks.monotonic()
        let effective = clock.now(wall: clocks.wall(), monotonic: monotonic)
        let mayAttempt = pipeline.mayAttempt(at: monotonic)
        let notDue = Set(notBefore.filter { $0.value > monotonic }.keys)
        let replay = replayDue
        let policy = policy
        var report = CycleReport()

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
            if mayAttempt, try sealer.maySeal() {
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
            let entries = try log.entries(seqs: prepared.selected)
            // Log id and checkpoint are read once per cycle, not once per (split) request.
            let context = BatchContext(logId: try log.info().logId, checkpoint: try log.latestCheckpoint())
            try await deliver(entries, context, replayed: prepared.replayed, report: &report)
        }
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
        report.health = pipeline.health(pending: report.pending, at: clocks.monotonic(), policy: policy)
        if report.health != lastHealth {
            emit(report.health == .healthy ? "info" : "warning", "delivery health", ["health": report.health.rawValue])
            lastHealth = report.health
        }
        try await persistStatus(report)
        return report
    }

    private struct Prepared: Sendable {
        var removed: [String: Int] = [:]
        var selected: [UInt64] = []
        var replayed: Set<UInt64> = []
        var recordsSealed = 0
        var refused: [String] = []
        var pending = 0
    }

    private struct BatchContext: Sendable {
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
            checkpoint: context.checkpoint
        )
        let started = clocks.monotonic()
        let outcome = await transport.send(batch)
        requestsTotal += 1
        report.sent += entries.count
        let verdict = SyncClassifier.classify(
            outcome,
            now: Date(timeIntervalSince1970: Double(clocks.wall()) / 1000),
            maxRetryAfter: policy.maxRetryAfter
        )
        let now = clocks.monotonic()
        switch verdict {
        case .answered(let response):
            lastLatency = now - started
            pipeline.recordAnswer()
            try await apply(response, sent: Set(entries.map(\.seq)), replayed: replayed, report: &report)
            if replayed.isEmpty { replayDue = true }
        case .outage(let reason, let retryAfter):
            var network = false
            if case .failure = outcome { network = true }
            let delay = pipeline.recordOutage(
                at: now,
                reason: reason,
                retryAfter: retryAfter,
                unit: clocks.random(),
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
                let half = entries.count / 2
                try await deliver(Array(entries[..<half]), context, replayed: replayed, report: &report)
                if pipeline.mayAttempt(at: clocks.monotonic()) {
                    try await deliver(Array(entries[half...]), context, replayed: replayed, report: &report)
                }
            }
        }
    }

    /// Applies per-entry results in one transaction.
    private func apply(
        _ response: SyncResponse,
        sent: Set<UInt64>,
        replayed: Set<UInt64>,
        report: inout CycleReport
    ) async throws {
        let policy = policy
        let wall = clocks.wall()
        let receipt = try response.receipt.flatMap { try checkReceipt($0) }
        let outcome = try await log.deliveryTransaction(scope: .rows(sent.sorted())) { table, sealer in
            var outcome = Applied()
            var removed: [String: Int] = [:]
            for result in response.results where sent.contains(result.seq) {
                guard var item = table.items[result.seq] else { continue }
                switch result.status {
                case .accepted, .duplicate:
                    table.items[result.seq] = nil
                    outcome.delivered += 1
                case .rejected where result.isRetryable && item.state == .pending:
                    item.attempts += 1
                    if item.attempts >= policy.maxAttempts {
                        item.state = .dlq
                        item.reason = "retriesExhausted"
                        item.detail = result.reason
                        item.changedAt = wall
                        outcome.deadLettered += 1
                    } else {
                        outcome.retry[result.seq] = item.attempts
                    }
                    table.items[result.seq] = item
                case .rejected where result.isRetryable:
                    break  // a DLQ entry offered again and refused for now: it stays in the DLQ
                case .rejected:
                    if item.state == .dlq || replayed.contains(result.seq) {
                        item.state = .removed
                        removed["rejected", default: 0] += 1
                    } else {
                        item.state = .dlq
                        outcome.deadLettered += 1
                    }
                    item.reason = "rejected"
                    item.detail = "HTTP \(result.code): \(result.reason)"
                    item.changedAt = wall
                    table.items[result.seq] = item
                }
            }
            DeliveryStatus.addDropped(removed, stored: sealer.storedMetadata, into: &sealer.metadata)
            outcome.removed = removed
            sealer.metadata[DeliveryStatus.Meta.lastSuccess] = AuditTimestamp(millisecondsSinceEpoch: wall).rfc3339
            sealer.metadata[DeliveryStatus.Meta.lastError] = ""
            if let receipt {
                sealer.metadata[DeliveryStatus.Meta.receipt] = String(
                    decoding: receipt.json.canonicalBytes,
                    as: UTF8.self
                )
            }
            return outcome
        }
        let now = clocks.monotonic()
        for (seq, attempts) in outcome.retry {
            notBefore[seq] = now + policy.jitteredDelay(afterFailures: attempts, unit: clocks.random())
        }
        for seq in sent where outcome.retry[seq] == nil { notBefore[seq] = nil }
        report.delivered += outcome.delivered
        deliveredTotal += outcome.delivered
        report.deadLettered += outcome.deadLettered
        report.retried += outcome.retry.count
        report.removed.merge(outcome.removed, uniquingKeysWith: +)
        if outcome.deadLettered > 0 {
            emit("warning", "entries moved to the dead-letter queue", ["count": String(outcome.deadLettered)])
        }
    }

    private struct Applied: Sendable {
        var delivered = 0
        var deadLettered = 0
        var retry: [UInt64: Int] = [:]
        var removed: [String: Int] = [:]
    }

    /// A single entry the backend refused as a whole request: DLQ, or out with a record if it was a replay.
    private func reject(_ seq: UInt64, reason: String, replayed: Set<UInt64>, report: inout CycleReport) async throws {
        let wall = clocks.wall()
        let left = try await log.deliveryTransaction(scope: .rows([seq])) { table, sealer in
            guard var item = table.items[seq] else { return false }
            let leaves = item.state == .dlq || replayed.contains(seq)
            item.state = leaves ? .removed : .dlq
            item.reason = "rejected"
            item.detail = reason
            item.changedAt = wall
            table.items[seq] = item
            if leaves {
                DeliveryStatus.addDropped(["rejected": 1], stored: sealer.storedMetadata, into: &sealer.metadata)
            }
            return leaves
        }
        if left { report.removed["rejected", default: 0] += 1 } else { report.deadLettered += 1 }
        emit("warning", "entry refused by the backend", ["seq": String(seq), "reason": reason])
    }

    /// Keeps a receipt only if it is for this log and states a head this log holds with the same hash.
    private func checkReceipt(_ receipt: CollectorReceipt) throws -> CollectorReceipt? {
        let info = try log.info()
        guard receipt.logId == info.logId, receipt.seq <= info.head.seq else {
            emit("error", "receipt for another log or beyond the head", ["seq": String(receipt.seq)])
            return nil
        }
        if let stored = try log.entries(seqs: [receipt.seq]).first,
            let entry = try? SealedEntry(serialized: stored.bytes), entry.entryHash != receipt.entryHash
        {
            emit("error", "the collector's receipt names a different entry: fork", ["seq": String(receipt.seq)])
            return nil
        }
        return receipt
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

    private func emit(_ level: String, _ message: String, _ fields: [String: String]) {
        onEvent(Event(level: level, message: message, fields: fields))
    }
}
