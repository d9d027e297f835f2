import AuditChain

/// How far behind each log's contiguous head is, as this replica saw it in the batches it processed; pure (the
/// caller gives the time), bounded in the logs it keeps.
///
/// For each log it keeps the highest seq seen held (accepted now, or a duplicate of a held entry) and the head after
/// the batch. Its **lag** is how far that seq is above the head: entries received past a gap that no removal record
/// bridges yet, which receipts do not cover; 0 when the head covers everything seen (with no head yet, every seq up
/// to it counts). Its **head age** is the time since this replica last saw the head move (or first saw the log).
/// Only logs seen within ``window`` are kept, at most ``capacity`` of them: a new log past it replaces the least
/// recently seen one.
struct LogLagTable: Sendable {
    /// One log.
    struct Entry: Sendable, Hashable {
        var highestHeld: UInt64?
        var head: UInt64?
        var lastSeen: ContinuousClock.Instant
        var headMoved: ContinuousClock.Instant
        /// A format version 2 log's epochs as this replica last read them from the database (nil: version 1, or
        /// not read yet: see ``epochRead``).
        var epoch: LogStatus.Epoch?
        /// Whether ``epoch`` was read since this replica began keeping the log.
        var epochRead = false

        /// Seqs above the head up to the highest held one.
        var lag: UInt64 {
            guard let highestHeld else { return 0 }
            guard let head else { return highestHeld &+ 1 }
            return highestHeld > head ? highestHeld - head : 0
        }
    }

    let window: Duration
    let capacity: Int
    /// By lowercase hex log id.
    private(set) var entries: [String: Entry] = [:]
    /// Logs dropped to stay within ``capacity``.
    private(set) var evicted = 0

    init(window: Duration, capacity: Int) {
        self.window = window
        self.capacity = max(0, capacity)
    }

    /// Records a processed batch of the log: the highest seq it found held (nil: none) and the head after it.
    mutating func record(log: String, highestHeld: UInt64?, head: UInt64?, at now: ContinuousClock.Instant) {
        expire(at: now)
        guard var entry = entries[log] else {
            guard capacity > 0 else { return }
            if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
                entries[oldest.key] = nil
                evicted += 1
            }
            entries[log] = Entry(highestHeld: highestHeld, head: head, lastSeen: now, headMoved: now)
            return
        }
        entry.lastSeen = now
        if let highestHeld { entry.highestHeld = max(entry.highestHeld ?? 0, highestHeld) }
        if let head, entry.head.map({ head > $0 }) ?? true {
            entry.head = head
            entry.headMoved = now
        }
        entries[log] = entry
    }

    /// Whether the log's epoch must be read (again) after a batch of it that stored entries of `storedKinds`: this
    /// replica has not read it since it began keeping the log, or the batch stored a record that moves it (genesis,
    /// epoch, close, crash recovery), or any entry after a close (a new run). False for a log not kept.
    func wantsEpoch(log: String, storedKinds: [RecordKind]) -> Bool {
        guard let entry = entries[log] else { return false }
        guard entry.epochRead else { return true }
        let moving: Set<RecordKind> = [.genesis, .epoch, .close, .crashRecovery]
        return storedKinds.contains { moving.contains($0) } || (entry.epoch?.closed == true && !storedKinds.isEmpty)
    }

    /// Keeps the log's epoch as read from the database (nothing for a log not kept).
    mutating func setEpoch(log: String, _ epoch: LogStatus.Epoch?) {
        guard entries[log] != nil else { return }
        entries[log]?.epoch = epoch
        entries[log]?.epochRead = true
    }

    /// Forgets the logs not seen within ``window``.
    mutating func expire(at now: ContinuousClock.Instant) {
        entries = entries.filter { now - $0.value.lastSeen <= window }
    }
}
