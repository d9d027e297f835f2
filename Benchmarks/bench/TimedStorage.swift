import AuditChain
import AuditStore
import Synchronization

/// A ``LogStorage`` that forwards every call to the real storage and records where each write transaction's
/// time goes: inside the body (AuditLog's sealing: AES-GCM, hashing, signing) and around it (SQLite: begin,
/// head read, inserts, commit, fsync). The overhead is two clock reads and a lock per transaction.
final class TimedStorage: ForwardingLogStorage {
    /// Totals since the last ``reset()``.
    struct Totals: Sendable {
        /// Write transactions.
        var transactions = 0
        /// Entries written (events and the system records AuditLog adds).
        var entries = 0
        /// Seconds inside `append` (the whole transaction).
        var appendSeconds = 0.0
        /// Seconds inside the body (sealing, and the inserts of what it writes to the sink as it goes).
        var bodySeconds = 0.0
        /// Seconds of the body spent inserting what it wrote to the sink, and claiming the events' idempotency
        /// tags (on the writer thread; the inserts while the other threads sign).
        var sinkSeconds = 0.0
        /// Seconds of storage work: the transaction minus the body.
        var storageSeconds: Double { appendSeconds - bodySeconds }
        /// Each transaction's seconds inside `append` and inside the body, in order.
        var samples: [(append: Double, body: Double)] = []
    }

    let base: any LogStorage
    private let state = Mutex(Totals())

    init(_ base: any LogStorage) {
        self.base = base
    }

    /// The totals so far.
    var totals: Totals { state.withLock { $0 } }

    /// Starts counting again.
    func reset() { state.withLock { $0 = Totals() } }

    func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, any LogEntrySink) throws -> (LogAppend, Result)
    ) async throws -> Result {
        let start = ContinuousClock.now
        let bodyTime = Mutex((seconds: 0.0, entries: 0, sinkSeconds: 0.0))
        let result = try await base.append { snapshot, sink in
            let counting = CountingSink(base: sink)
            let bodyStart = ContinuousClock.now
            let output = try body(snapshot, counting)
            let elapsed = Timing.seconds(ContinuousClock.now - bodyStart)
            bodyTime.withLock {
                $0 = ($0.seconds + elapsed, counting.count + output.0.entries.count, counting.seconds)
            }
            return output
        }
        let total = Timing.seconds(ContinuousClock.now - start)
        let inBody = bodyTime.withLock { $0 }
        state.withLock { totals in
            totals.transactions += 1
            totals.entries += inBody.entries
            totals.appendSeconds += total
            totals.bodySeconds += inBody.seconds
            totals.sinkSeconds += inBody.sinkSeconds
            totals.samples.append((total, inBody.seconds))
        }
        return result
    }
}

/// Counts and times the entries a body writes early.
private final class CountingSink: LogEntrySink {
    let base: any LogEntrySink
    var count = 0
    var seconds = 0.0

    init(base: any LogEntrySink) { self.base = base }

    func write(_ entries: [SealedEntry], priorities: [DeliveryPriority]) throws {
        let start = ContinuousClock.now
        try base.write(entries, priorities: priorities)
        seconds += Timing.seconds(ContinuousClock.now - start)
        count += entries.count
    }

    func claim(_ tag: IdempotencyTag, for seq: UInt64, occurredAtStamped: Bool) throws -> IdempotencyHolder? {
        let start = ContinuousClock.now
        defer { seconds += Timing.seconds(ContinuousClock.now - start) }
        return try base.claim(tag, for: seq, occurredAtStamped: occurredAtStamped)
    }

    func releaseClaims(from seq: UInt64) throws { try base.releaseClaims(from: seq) }

    func storedEntry(at seq: UInt64) throws -> StoredEntry? { try base.storedEntry(at: seq) }

    func subjectSecret(tag: [UInt8]) throws -> [UInt8]? {
        let start = ContinuousClock.now
        defer { seconds += Timing.seconds(ContinuousClock.now - start) }
        return try base.subjectSecret(tag: tag)
    }

    func storeSubjectSecret(tag: [UInt8], wrapped: [UInt8]) throws {
        let start = ContinuousClock.now
        defer { seconds += Timing.seconds(ContinuousClock.now - start) }
        try base.storeSubjectSecret(tag: tag, wrapped: wrapped)
    }

    func addSubjectEvents(tag: [UInt8], count: Int) throws {
        let start = ContinuousClock.now
        defer { seconds += Timing.seconds(ContinuousClock.now - start) }
        try base.addSubjectEvents(tag: tag, count: count)
    }

    func eraseSubjectSecret(tag: [UInt8]) throws -> Int?? { try base.eraseSubjectSecret(tag: tag) }
}
