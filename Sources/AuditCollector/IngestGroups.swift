import Synchronization

/// Group commit of concurrent ingests (docs/COLLECTOR.md section 7): batches that arrive while the collector's
/// write transactions are busy wait for the next one and share it (one transaction, one commit and its flush to
/// disk, one round trip for their logs' locks).
///
/// A batch never waits for company: when fewer than ``concurrentGroups`` transactions run, it starts one at once with
/// whatever waits beside it, so an idle collector adds no delay. Otherwise it waits for the first of them to end,
/// at most the time of one group (``maxBatches`` batches or ``maxEntries`` entries, whichever comes first; a larger
/// batch is a group of its own); that wait is part of the ingest time the latency histogram shows.
///
/// The order of the batches of one log is the order of their transactions: the database's per-log locks decide it
/// (``CollectorDatabase/write(logs:_:)``), in one process or across replicas, never this queue.
final class IngestGroups<Request: Sendable, Answer: Sendable>: Sendable {
    /// Batches of one group, at most.
    let maxBatches: Int
    /// Entries of one group, at most (a batch larger than that runs alone).
    let maxEntries: Int
    /// Group transactions running at once.
    let concurrentGroups: Int
    /// Runs one group: one answer per request, in order (each its own success or failure).
    private let run: @Sendable ([Request]) async -> [Result<Answer, any Error>]
    private let state = Mutex(State())

    private struct Waiting: Sendable {
        var request: Request
        var entries: Int
        var continuation: CheckedContinuation<Answer, any Error>
    }

    private struct State: Sendable {
        var queue: [Waiting] = []
        var running = 0
    }

    /// Creates the queue.
    /// - Parameters:
    ///   - maxBatches: batches of one group, at most (at least 1).
    ///   - maxEntries: entries of one group, at most (at least 1).
    ///   - concurrentGroups: group transactions running at once (at least 1).
    ///   - run: runs one group.
    init(
        maxBatches: Int,
        maxEntries: Int,
        concurrentGroups: Int,
        run: @escaping @Sendable ([Request]) async -> [Result<Answer, any Error>]
    ) {
        self.maxBatches = max(1, maxBatches)
        self.maxEntries = max(1, maxEntries)
        self.concurrentGroups = max(1, concurrentGroups)
        self.run = run
    }

    /// Batches waiting for a group.
    var waiting: Int { state.withLock { $0.queue.count } }

    /// Runs `request` (of `entries` entries) in the next group and returns its answer.
    /// - Throws: what its part of the group threw, or the group transaction's error.
    func submit(_ request: Request, entries: Int) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let group = state.withLock { state -> [Waiting]? in
                state.queue.append(Waiting(request: request, entries: entries, continuation: continuation))
                guard state.running < concurrentGroups else { return nil }
                state.running += 1
                return Self.next(&state.queue, maxBatches: maxBatches, maxEntries: maxEntries)
            }
            if let group { Task { await self.drive(group) } }
        }
    }

    /// Runs `group`, answers it, and goes on with the next group while batches wait.
    private func drive(_ first: [Waiting]) async {
        var group = first
        while true {
            let answers = await run(group.map(\.request))
            for (index, waiting) in group.enumerated() {
                waiting.continuation.resume(
                    with: index < answers.count
                        ? answers[index]
                        : .failure(CollectorError(.storage, "the group commit gave no answer for this batch"))
                )
            }
            let next = state.withLock { state -> [Waiting]? in
                guard !state.queue.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return Self.next(&state.queue, maxBatches: maxBatches, maxEntries: maxEntries)
            }
            guard let next else { return }
            group = next
        }
    }

    /// Takes the next group off the front of `queue`: at least one batch, then as many as fit.
    private static func next(_ queue: inout [Waiting], maxBatches: Int, maxEntries: Int) -> [Waiting] {
        var count = 1
        var entries = queue[0].entries
        while count < min(queue.count, maxBatches), entries + queue[count].entries <= maxEntries {
            entries += queue[count].entries
            count += 1
        }
        let group = Array(queue.prefix(count))
        queue.removeFirst(count)
        return group
    }
}
