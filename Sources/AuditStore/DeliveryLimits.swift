public import AuditChain

/// The limits as pure functions over the delivery table: which entries leave delivery, and the accounted-removal
/// records that say so (docs/DELIVERY.md).
public enum DeliveryLimits: Sendable {
    /// Applies expiry, the pending limit (FIFO with priorities) and the DLQ limit at effective time `now`.
    /// Entries that leave are marked ``DeliveryState/removed`` with their reason; nothing is deleted here.
    /// The table holds every row or at least ``DeliveryScope/limits(now:policy:)`` of it (the same result).
    /// - Returns: how many entries left, by reason (``DeliveryReason`` raw values).
    @discardableResult
    public static func enforce(_ table: inout DeliveryTable, now: Int64, policy: DeliveryPolicy) -> [String: Int] {
        var left: [String: Int] = [:]
        func remove(_ seq: UInt64, _ reason: DeliveryReason) {
            table.items[seq]?.state = .removed
            table.items[seq]?.reason = reason.rawValue
            table.items[seq]?.changedAt = now
            left[reason.rawValue, default: 0] += 1
        }
        // Pinned entries (system records, genesis, rotations) never wait in the DLQ: the collector needs them to
        // bridge and verify everything else, so they stay pending until it accepts them. (A log from a version that
        // dead-lettered them gets them back here.)
        for item in table.items.values where item.state == .dlq && item.priority >= .system {
            table.items[item.seq]?.state = .pending
            table.items[item.seq]?.changedAt = now
        }
        // Expiry takes events only. Genesis and rotations stay (the collector needs them to verify what follows),
        // and so do system records: an expired removal record would be replaced by one that says only "a record
        // expired", and the account of the entries it stood for would be lost.
        let maxAge = policy.maxAge.milliseconds
        for item in table.items.values
        where item.state == .pending && item.priority < .system && now - item.enqueuedAt > maxAge {
            remove(item.seq, .expired)
        }
        // FIFO over events: routine before critical, oldest first. System records (the removal records among
        // them) neither count nor leave: they are few (at most one per run per attempt) and the collector needs
        // them to bridge the gaps.
        let excess = table.pendingEvents - policy.maxEvents
        if excess > 0 {
            let victims = table.items.values
                .filter { $0.state == .pending && $0.priority < .system }
                .sorted { ($0.priority, $0.seq) < ($1.priority, $1.seq) }
                .prefix(excess)
            for victim in victims { remove(victim.seq, .fifo) }
        }
        // DLQ overflow: the longest-waiting leave first (events only: pinned entries are never in the DLQ).
        let dead = table.items(in: .dlq).filter { $0.priority < .system }
        if dead.count > policy.maxDeadLetters {
            for item in dead.sorted(by: { ($0.changedAt, $0.seq) < ($1.changedAt, $1.seq) })
                .prefix(dead.count - policy.maxDeadLetters)
            {
                remove(item.seq, .dlqOverflow)
            }
        }
        return left
    }

    /// The accounted-removal records owed for the removed entries, one per run, and deletes their rows.
    /// The table holds every row or at least ``DeliveryScope/limits(now:policy:)`` of it after ``enforce``.
    public static func takeRemovalRecords(_ table: inout DeliveryTable) -> [SystemRecord.Removal] {
        let records = removalRecords(in: table)
        for record in records { deleteRows(of: record, from: &table) }
        return records
    }

    /// The accounted-removal records owed for the removed entries, one per run; the rows stay until
    /// ``deleteRows(of:from:)`` (a caller deletes those of the records it sealed).
    ///
    /// A run is a maximal sequence of removed rows with consecutive sequence numbers (a pending or DLQ row, or an
    /// entry delivered meanwhile, which has no row, ends it), so a collector that holds everything before the run
    /// can jump over it: the record's `lastRemovedHash` is the hash the entry after the run links to, and its
    /// `count` is its whole range.
    public static func removalRecords(in table: DeliveryTable) -> [SystemRecord.Removal] {
        var records: [SystemRecord.Removal] = []
        var run: [DeliveryItem] = []
        func close() {
            guard let first = run.first, let last = run.last else { return }
            var reasons: [String: Int] = [:]
            var details: [String] = []
            for item in run {
                reasons[item.reason, default: 0] += 1
                if !item.detail.isEmpty, !details.contains(item.detail) { details.append(item.detail) }
            }
            let reason = reasons.keys.sorted().joined(separator: "+")
            var detail = details.joined(separator: "; ")
            if reasons.count > 1 {
                let counts = reasons.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                detail = detail.isEmpty ? counts : counts + "; " + detail
            }
            if detail.utf8.count > 1000 { detail = String(detail.prefix(1000)) }
            records.append(
                SystemRecord.Removal(
                    reason: reason,
                    firstSeq: first.seq,
                    lastSeq: last.seq,
                    count: UInt64(run.count),
                    lastRemovedHash: last.hash,
                    detail: detail
                )
            )
            run.removeAll()
        }
        for item in table.items.values.sorted(by: { $0.seq < $1.seq }) {
            // A run is consecutive: an entry between two removed ones that has no row (delivered) ends it too, so
            // every record's `count` is its whole range and any verifier bridges the gap with it (FORMAT.md section
            // 10, step 6), not only a collector that holds the delivered entries.
            if let last = run.last, item.seq != last.seq + 1 { close() }
            if item.state == .removed { run.append(item) } else { close() }
        }
        close()
        return records
    }

    /// Deletes the rows a record of ``removalRecords(in:)`` accounts for: the removed rows of its range (a run has
    /// no other rows).
    public static func deleteRows(of record: SystemRecord.Removal, from table: inout DeliveryTable) {
        let run = record.firstSeq...record.lastSeq
        for item in table.items.values where item.state == .removed && run.contains(item.seq) {
            table.items[item.seq] = nil
        }
    }
}
