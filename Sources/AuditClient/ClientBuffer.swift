import AuditChain

/// The client's bounded buffer, pure: events waiting for the agent (oldest first), which of them are in a request
/// now, the drops not yet reported and the reports offered but not yet acknowledged.
///
/// Bounds: at most `capacity` events; at most one frozen report per ``DropReason``; one open tally per reason.
struct ClientBuffer: Sendable {
    /// One event waiting for the agent.
    struct Item: Sendable, Hashable {
        var event: AuditEvent
        var isCritical: Bool
    }

    let capacity: Int
    /// Waiting events, oldest first.
    private(set) var items: [Item] = []
    /// Keys of the waiting events (a re-offered event is not buffered twice).
    private(set) var keys: Set<String> = []
    /// Keys of the events in a request now: they are not evicted (the request may commit them).
    private(set) var inFlight: Set<String> = []
    /// Drops not yet in a report, by reason.
    private(set) var open: [DropReason: DropTally] = [:]
    /// Reports offered to the agent and not yet acknowledged, at most one per reason.
    private(set) var reports: [DropReport] = []
    /// Drops whose report the agent refused (its catalogue lacks `AUDIT_EVENTS_DROPPED`), by reason: known only here.
    private(set) var withdrawn: [DropReason: Int] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Whether anything waits for the agent: events, drops or reports.
    var hasWork: Bool { !items.isEmpty || !open.isEmpty || !reports.isEmpty }

    /// How many events wait.
    var count: Int { items.count }

    /// Adds an event at the end. A key already buffered is ignored. When the buffer is full, the oldest routine event
    /// not in a request is dropped, else the oldest critical one not in a request, else the new event itself; the
    /// drop is counted (``DropReason/overflow``).
    /// - Returns: the dropped event, if any.
    @discardableResult
    mutating func add(_ item: Item) -> AuditEvent? {
        guard !keys.contains(item.event.idempotencyKey) else { return nil }
        var dropped: AuditEvent?
        if items.count >= capacity {
            let victim =
                items.firstIndex { !$0.isCritical && !inFlight.contains($0.event.idempotencyKey) }
                ?? items.firstIndex { !inFlight.contains($0.event.idempotencyKey) }
            guard let victim else {
                countDrop(item, reason: .overflow)
                return item.event
            }
            let removed = items.remove(at: victim)
            keys.remove(removed.event.idempotencyKey)
            countDrop(removed, reason: .overflow)
            dropped = removed.event
        }
        items.append(item)
        keys.insert(item.event.idempotencyKey)
        return dropped
    }

    /// Counts a dropped event under `reason`.
    mutating func countDrop(_ item: Item, reason: DropReason) {
        if open[reason] == nil {
            open[reason] = DropTally(item.event, critical: item.isCritical)
        } else {
            open[reason]?.add(item.event, critical: item.isCritical)
        }
    }

    /// Turns each open tally whose reason has no report yet into a frozen report (`makeReport`), and returns every
    /// report's event, to go first in the next request.
    mutating func offerReports(_ makeReport: (DropReason, DropTally) -> DropReport) -> [AuditEvent] {
        for reason in DropReason.allCases where !reports.contains(where: { $0.reason == reason }) {
            guard let tally = open.removeValue(forKey: reason) else { continue }
            reports.append(makeReport(reason, tally))
        }
        return reports.map(\.event)
    }

    /// The oldest events not in a request, at most `limit`; they are marked in a request.
    mutating func takeBatch(_ limit: Int) -> [AuditEvent] {
        var batch: [AuditEvent] = []
        for item in items where batch.count < limit && !inFlight.contains(item.event.idempotencyKey) {
            batch.append(item.event)
        }
        inFlight.formUnion(batch.map(\.idempotencyKey))
        return batch
    }

    /// The request carrying `keys` ended without a commit: its events may be evicted again.
    mutating func release(_ keys: some Sequence<String>) { inFlight.subtract(keys) }

    /// The agent committed the events and reports with `keys`: they leave the buffer.
    mutating func acknowledge(_ committed: Set<String>) {
        inFlight.subtract(committed)
        items.removeAll { committed.contains($0.event.idempotencyKey) }
        keys.subtract(committed)
        reports.removeAll { committed.contains($0.event.idempotencyKey) }
    }

    /// The agent refused the event with `key` for good (400 or 409 naming it): it leaves the buffer, counted as
    /// dropped (``DropReason/refused``) and so reported. The only way an event leaves the buffer without a commit
    /// but an overflow.
    mutating func refuse(_ key: String) {
        inFlight.remove(key)
        guard let index = items.firstIndex(where: { $0.event.idempotencyKey == key }) else { return }
        let removed = items.remove(at: index)
        keys.remove(key)
        countDrop(removed, reason: .refused)
    }

    /// The agent refused a report for good (an agent whose catalogue lacks `AUDIT_EVENTS_DROPPED`): it is withdrawn
    /// so that it does not block every later request, and its count is kept in ``withdrawn``.
    mutating func withdrawReport(_ key: String) {
        guard let index = reports.firstIndex(where: { $0.event.idempotencyKey == key }) else { return }
        let report = reports.remove(at: index)
        let (sum, overflow) = withdrawn[report.reason, default: 0].addingReportingOverflow(report.count)
        withdrawn[report.reason] = overflow ? Int.max : sum
    }

    /// Restores a saved buffer (``ClientBufferFile``); events past the capacity are dropped as on overflow.
    mutating func restore(_ saved: ClientBufferFile.Saved) {
        open = saved.open
        reports = []
        for reason in DropReason.allCases {
            if let report = saved.reports.first(where: { $0.reason == reason }) { reports.append(report) }
        }
        for item in saved.items { add(item) }
    }
}
