/// Which rows of the delivery table a transaction or a read loads.
///
/// Loading every row costs time in proportion to the backlog, and a delivery cycle needs only a few of them. A
/// scope names the rows a piece of work needs. ``all``, ``counts`` and ``limits(now:policy:)`` also count the
/// rows they leave out (``DeliveryTable/unloaded``), so ``DeliveryTable/count(_:)`` is exact. ``rows(_:)``,
/// ``head(_:)`` and ``lowest(_:)`` do not (counting costs a pass over the table): their counts cover the loaded
/// rows only.
/// ``DeliveryTable/scoped(_:)`` is the definition; the SQLite storage loads the same rows with queries, and a test
/// holds the two to each other.
public enum DeliveryScope: Sendable, Hashable {
    /// Every row.
    case all
    /// No row; the counts only.
    case counts
    /// The rows with these sequence numbers (those that exist); the rest are not counted.
    case rows([UInt64])
    /// The first `count` pending rows in sequence order, and every DLQ row: what a batch is chosen from. The rest
    /// are not counted.
    case head(Int)
    /// The `count` rows with the lowest sequence numbers, whatever their state: where the delivered prefix ends.
    /// The rest are not counted.
    case lowest(Int)
    /// What ``DeliveryLimits/enforce(_:now:policy:)`` and then ``DeliveryLimits/takeRemovalRecords(_:)`` need at
    /// effective time `now`, with the same result as on the whole table:
    /// - every row not pending (DLQ rows, removed rows awaiting their record);
    /// - pending events old enough to expire;
    /// - when the pending events exceed the limit, the lowest `excess` of them by (priority, seq), a superset of
    ///   the FIFO victims (expiry may take some first);
    /// - every pending row between the lowest and highest row that is or may become removed: such a row ends a
    ///   run of removed rows, and runs decide the accounted-removal records.
    case limits(now: Int64, policy: DeliveryPolicy)
}

extension DeliveryTable {
    /// The part of this (whole) table a scope loads, with the rest counted if the scope counts.
    public func scoped(_ scope: DeliveryScope) -> DeliveryTable {
        var kept: [UInt64: DeliveryItem] = [:]
        switch scope {
        case .all:
            return self
        case .counts:
            break
        case .rows(let seqs):
            for seq in seqs { kept[seq] = items[seq] }
        case .head(let count):
            for item in items.values where item.state == .dlq { kept[item.seq] = item }
            for item in items(in: .pending).prefix(max(0, count)) { kept[item.seq] = item }
        case .lowest(let count):
            for item in items.values.sorted(by: { $0.seq < $1.seq }).prefix(max(0, count)) { kept[item.seq] = item }
        case .limits(let now, let policy):
            let cutoff = now - policy.maxAge.milliseconds
            for item in items.values
            where item.state != .pending || (item.priority < .system && item.enqueuedAt < cutoff) {
                kept[item.seq] = item
            }
            let excess = pendingEvents - policy.maxEvents
            if excess > 0 {
                let events = items.values.filter { $0.state == .pending && $0.priority < .system }
                for item in events.sorted(by: { ($0.priority, $0.seq) < ($1.priority, $1.seq) }).prefix(excess) {
                    kept[item.seq] = item
                }
            }
            if let range = DeliveryScope.removalRange(kept.values, policy: policy) {
                for item in items.values where item.state == .pending && range.contains(item.seq) {
                    kept[item.seq] = item
                }
            }
        }
        var table = DeliveryTable(items: kept)
        guard scope.counts else { return table }
        for item in items.values where kept[item.seq] == nil {
            table.unloaded[item.state, default: 0] += 1
            if item.state == .pending, item.priority < .system { table.unloadedPendingEvents += 1 }
        }
        return table
    }

    /// What changed from `old` to this table (both with the same rows loaded): the rows deleted and the rows
    /// added or changed, in sequence order.
    public func changes(from old: DeliveryTable) -> (deleted: [UInt64], upserted: [DeliveryItem]) {
        let deleted = old.items.keys.filter { items[$0] == nil }.sorted()
        let upserted = items.values.filter { old.items[$0.seq] != $0 }.sorted { $0.seq < $1.seq }
        return (deleted, upserted)
    }
}

extension DeliveryScope {
    /// Whether the rows left out are counted.
    public var counts: Bool {
        switch self {
        case .all, .counts, .limits: true
        case .rows, .head, .lowest: false
        }
    }

    /// The sequence range from the lowest to the highest row among `loaded` (a ``limits(now:policy:)`` load before
    /// its separators) that is removed or may be removed by ``DeliveryLimits/enforce(_:now:policy:)``: removed
    /// rows, the pending candidates, and DLQ rows when the DLQ is over its limit.
    static func removalRange(
        _ loaded: some Collection<DeliveryItem>,
        policy: DeliveryPolicy
    ) -> ClosedRange<UInt64>? {
        let dlqOverflows = loaded.reduce(0) { $0 + ($1.state == .dlq ? 1 : 0) } > policy.maxDeadLetters
        let seqs = loaded.lazy.filter { $0.state != .dlq || dlqOverflows }.map(\.seq)
        guard let low = seqs.min(), let high = seqs.max() else { return nil }
        return low...high
    }
}
