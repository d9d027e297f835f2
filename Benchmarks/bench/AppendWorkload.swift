import AuditChain
import AuditStore

/// One way of appending the events: the figures of the `append` section, and of `journald`'s.
struct AppendWorkload: Sendable {
    /// The three ways: one call, batches one after another, concurrent single-event producers.
    enum Kind: Sendable { case oneCall, batched, concurrent }
    /// Which of the three this is.
    var kind: Kind
    /// A short name (also of the run's database files).
    var label: String
    /// The figure's name.
    var figure: String
    /// Appends every event to `log`.
    var body: @Sendable (AuditLog) async throws -> Void

    /// Every event in one call; in calls of `batch` events one after another; from `producers` concurrent
    /// tasks with one event per call (none when `producers` is 0).
    static func all(events: [AuditEvent], batch: Int, producers: Int) -> [AppendWorkload] {
        let count = events.count
        let grouped = Timing.grouped(Double(count))
        var workloads = [
            AppendWorkload(
                kind: .oneCall,
                label: "one call",
                figure: "append \(grouped) events in one call (bulk import)"
            ) {
                log in
                _ = try await log.append(events)
            },
            AppendWorkload(
                kind: .batched,
                label: "batched",
                figure: "append \(grouped) events, batches of \(batch), one after another"
            ) { log in
                var start = 0
                while start < count {
                    let end = min(count, start + batch)
                    _ = try await log.append(Array(events[start..<end]))
                    start = end
                }
            },
        ]
        guard producers > 0 else { return workloads }
        workloads.append(
            AppendWorkload(
                kind: .concurrent,
                label: "concurrent",
                figure: "append \(grouped) events, \(producers) producers × 1 event (group commit)"
            ) { log in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for producer in 0..<producers {
                        group.addTask {
                            for index in stride(from: producer, to: count, by: producers) {
                                _ = try await log.append([events[index]])
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        )
        return workloads
    }
}
