import AuditChain
import Synchronization

/// An in-memory ``LogStorage`` for tests: the same contract, no durability.
public final class MemoryLogStorage: LogStorage {
    private struct State {
        var entries: [StoredEntry] = []
        var heads: [ChainHead] = []
        var newest: SealedEntry?
        var keySource: SealedEntry?
        var metadata: [String: String] = [:]
        var delivery = DeliveryTable()
        /// The idempotency index: the entry holding each tag, and the tag of each seq.
        var tags: [IdempotencyTag: IdempotencyHolder] = [:]
        var tagsBySeq: [UInt64: IdempotencyTag] = [:]
        /// The subject key table: wrapped secrets by tag.
        var subjects: [[UInt8]: [UInt8]] = [:]
        /// Each row's count of sealed events, by tag.
        var sealed: [[UInt8]: Int] = [:]

        var snapshot: LogSnapshot {
            LogSnapshot(head: heads.last, metadata: metadata, newest: newest, keySource: keySource)
        }

        mutating func apply(_ append: LogAppend) throws {
            try write(append.entries, priorities: append.entryPriorities)
            metadata.merge(append.metadata) { _, new in new }
        }

        /// Checks that `written` has one priority per entry and continues the chain after `previous`
        /// (``ChainRules/successor(_:of:)``), which it advances past them.
        static func check(
            _ written: [SealedEntry],
            priorities: [DeliveryPriority],
            after previous: inout ChainHead?
        ) throws {
            guard written.count == priorities.count else {
                throw LogStoreError(.invalidInput, "\(written.count) entries but \(priorities.count) priorities")
            }
            for entry in written {
                if let violation = ChainRules.successor(entry.header, of: previous) {
                    throw LogStoreError(.corruptState, violation.description)
                }
                previous = ChainHead(logId: entry.header.logId, seq: entry.header.seq, hash: entry.entryHash)
            }
        }

        mutating func write(_ written: [SealedEntry], priorities: [DeliveryPriority]) throws {
            var previous = heads.last
            try Self.check(written, priorities: priorities, after: &previous)
            for (entry, priority) in zip(written, priorities) {
                entries.append(StoredEntry(seq: entry.header.seq, bytes: entry.serialized))
                heads.append(ChainHead(logId: entry.header.logId, seq: entry.header.seq, hash: entry.entryHash))
                newest = entry
                if LogSnapshot.namesDataKey(entry.header.kind) { keySource = entry }
                delivery.items[entry.header.seq] = DeliveryItem(
                    seq: entry.header.seq,
                    priority: priority,
                    enqueuedAt: entry.header.time.millisecondsSinceEpoch,
                    hash: entry.entryHash
                )
            }
        }
    }

    /// Collects what a transaction writes; the storage applies it to its state only when the transaction succeeds
    /// (a copy of the whole state per transaction would make a long run of appends quadratic).
    private final class Sink: LogEntrySink {
        var entries: [SealedEntry] = []
        var priorities: [DeliveryPriority] = []
        var expected: UInt64
        /// The entry the next one must follow.
        var previous: ChainHead?
        let firstSeq: UInt64
        var open = true
        /// The index and entries as the transaction began (copies that share storage until written).
        let tags: [IdempotencyTag: IdempotencyHolder]
        let stored: [StoredEntry]
        /// Tags claimed in this transaction, by seq.
        var claims: [UInt64: IdempotencyTag] = [:]
        var claimed: [IdempotencyTag: IdempotencyHolder] = [:]

        /// The subject key table as the transaction sees it (applied on success).
        var subjects: [[UInt8]: [UInt8]]
        var sealed: [[UInt8]: Int]

        init(
            after head: ChainHead?,
            tags: [IdempotencyTag: IdempotencyHolder],
            stored: [StoredEntry],
            subjects: [[UInt8]: [UInt8]],
            sealed: [[UInt8]: Int]
        ) {
            expected = head.map { $0.seq + 1 } ?? 0
            firstSeq = expected
            previous = head
            self.tags = tags
            self.stored = stored
            self.subjects = subjects
            self.sealed = sealed
        }

        func subjectSecret(tag: [UInt8]) throws -> [UInt8]? { subjects[tag] }

        func storeSubjectSecret(tag: [UInt8], wrapped: [UInt8]) throws {
            guard open else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
            guard subjects[tag] == nil else { throw LogStoreError(.invalidInput, "the subject's secret is stored") }
            subjects[tag] = wrapped
        }

        func addSubjectEvents(tag: [UInt8], count: Int) throws {
            guard open else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
            guard subjects[tag] != nil else { throw LogStoreError(.invalidInput, "no subject row has this tag") }
            sealed[tag, default: 0] += count
        }

        func eraseSubjectSecret(tag: [UInt8]) throws -> Int?? {
            guard open else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
            guard subjects.removeValue(forKey: tag) != nil else { return nil }
            return .some(sealed.removeValue(forKey: tag) ?? 0)
        }

        func write(_ written: [SealedEntry], priorities: [DeliveryPriority]) throws {
            guard open else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
            var next = previous
            try State.check(written, priorities: priorities, after: &next)
            previous = next
            expected += UInt64(written.count)
            entries += written
            self.priorities += priorities
        }

        func claim(_ tag: IdempotencyTag, for seq: UInt64, occurredAtStamped: Bool) throws -> IdempotencyHolder? {
            guard open else { throw LogStoreError(.invalidInput, "a sink was used after its transaction") }
            guard seq >= firstSeq, claims[seq] == nil else {
                throw LogStoreError(.invalidInput, "seq \(seq) is claimed already or not written here")
            }
            if let holder = claimed[tag] ?? tags[tag] { return holder }
            claims[seq] = tag
            claimed[tag] = IdempotencyHolder(seq: seq, occurredAtStamped: occurredAtStamped)
            return nil
        }

        func releaseClaims(from seq: UInt64) throws {
            for (claimedSeq, tag) in claims where claimedSeq >= seq {
                claims[claimedSeq] = nil
                claimed[tag] = nil
            }
        }

        func storedEntry(at seq: UInt64) throws -> StoredEntry? { stored.first { $0.seq == seq } }
    }

    /// The entries a transaction sees.
    private struct Reader: LogEntryReader {
        let entries: [StoredEntry]

        func count(from: UInt64, through: UInt64) throws -> Int {
            entries.count { $0.seq >= from && $0.seq <= through }
        }

        func entry(at seq: UInt64) throws -> StoredEntry? { entries.first { $0.seq == seq } }
    }

    private let state = Mutex(State())

    /// Creates an empty storage.
    public init() {}

    public func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot, any LogEntrySink) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try state.withLock { state in
            let sink = Sink(
                after: state.heads.last,
                tags: state.tags,
                stored: state.entries,
                subjects: state.subjects,
                sealed: state.sealed
            )
            defer { sink.open = false }
            let (append, result) = try body(state.snapshot, sink)
            // Checked before anything changes: a failure leaves the state as it was.
            try sink.write(append.entries, priorities: append.entryPriorities)
            if let claimed = sink.claims.keys.max(), claimed >= sink.expected {
                throw LogStoreError(
                    .invalidInput,
                    "an idempotency tag was claimed for seq \(claimed), which was not written"
                )
            }
            try state.write(sink.entries, priorities: sink.priorities)
            state.metadata.merge(append.metadata) { _, new in new }
            state.subjects = sink.subjects
            state.sealed = sink.sealed
            for (seq, tag) in sink.claims {
                state.tags[tag] = sink.claimed[tag]
                state.tagsBySeq[seq] = tag
            }
            return result
        }
    }

    public func withDelivery<Result: Sendable>(
        scope: DeliveryScope,
        _ body: @Sendable (LogSnapshot, inout DeliveryTable, any LogEntryReader) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try state.withLock { state in
            var copy = state
            let old = copy.delivery.scoped(scope)
            var table = old
            let (append, result) = try body(copy.snapshot, &table, Reader(entries: copy.entries))
            let (deleted, upserted) = table.changes(from: old)
            for seq in deleted { copy.delivery.items[seq] = nil }
            for item in upserted { copy.delivery.items[item.seq] = item }
            try copy.apply(append)
            state = copy
            return result
        }
    }

    public func deliveryTable(scope: DeliveryScope) throws -> DeliveryTable {
        state.withLock { $0.delivery.scoped(scope) }
    }

    /// Every row of the key table (``LogStorage/subjectSecrets()``).
    public func subjectSecrets() throws -> [(tag: [UInt8], wrapped: [UInt8])] {
        state.withLock { $0.subjects.map { (tag: $0.key, wrapped: $0.value) } }
    }

    /// Nothing to scrub: a deleted row leaves no copy in memory the storage keeps.
    public func scrubErased() throws {}

    public func prune(
        through: UInt64,
        keep: Set<UInt64>,
        _ body: @Sendable (LogSnapshot) throws -> LogAppend
    ) async throws -> Int {
        try state.withLock { state in
            var copy = state
            guard !copy.delivery.items.keys.contains(where: { $0 > 0 && $0 <= through }) else {
                throw LogStoreError(.corruptState, "retention refused: entries up to \(through) are not all delivered")
            }
            let append = try body(copy.snapshot)
            let before = copy.entries.count
            copy.entries.removeAll { $0.seq <= through && !keep.contains($0.seq) }
            // An entry's idempotency tag leaves with it.
            for (seq, tag) in copy.tagsBySeq where seq <= through && !keep.contains(seq) {
                copy.tags[tag] = nil
                copy.tagsBySeq[seq] = nil
            }
            let removed = before - copy.entries.count
            try copy.apply(append)
            state = copy
            return removed
        }
    }

    public func snapshot() throws -> LogSnapshot {
        state.withLock { $0.snapshot }
    }

    public func entries(from: UInt64, through: UInt64, limit: Int) throws -> [StoredEntry] {
        state.withLock { state in
            Array(state.entries.lazy.filter { $0.seq >= from && $0.seq <= through }.prefix(limit))
        }
    }

    public func size() throws -> (count: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.entries.reduce(0) { $0 + $1.bytes.count }) }
    }

    /// Replaces the stored bytes of an entry (to simulate tampering in tests).
    public func tamper(seq: UInt64, _ change: (inout [UInt8]) -> Void) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.seq == seq }) { change(&state.entries[index].bytes) }
        }
    }
}
