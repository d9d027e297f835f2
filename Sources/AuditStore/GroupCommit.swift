import Synchronization

/// Shares commits between concurrent callers: the first caller leads and commits its own work together with
/// everything queued behind it; the others wait and get their part of the result. One transaction (one fsync)
/// per batch instead of one per caller.
///
/// A leader handed the lead by the previous one yields once before it takes the queue: callers that the previous
/// commit has just released are resumed at that moment, and letting them queue their next work first makes one full
/// batch instead of a batch of one followed by a batch of everyone else (two fsyncs for the same work). A caller that
/// finds no commit under way leads at once: nobody else is in flight, and a yield would only add a thread hop to
/// every sequential append's latency.
final class GroupCommit<Work: Sendable, Output: Sendable>: Sendable {
    private enum Outcome: Sendable {
        /// Lead a commit; `handedOver` when the previous leader passed the lead on (other callers are in flight).
        case lead(handedOver: Bool)
        case done(Result<Output, any Error>)
    }

    private struct Waiter: Sendable {
        var work: Work
        var continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State: Sendable {
        var leading = false
        var waiting: [Waiter] = []
    }

    private let state = Mutex(State())
    private let maxBatch: Int

    /// - Parameter maxBatch: most pieces of work one commit takes.
    init(maxBatch: Int = 4096) {
        self.maxBatch = maxBatch
    }

    /// Runs `work` in a commit shared with concurrent callers.
    /// - Parameter commit: commits a batch of work atomically and returns one output per piece, in order.
    func submit(_ work: Work, commit: @Sendable ([Work]) async throws -> [Output]) async throws -> Output {
        let outcome: Outcome = await withCheckedContinuation { continuation in
            state.withLock { state in
                if state.leading {
                    state.waiting.append(Waiter(work: work, continuation: continuation))
                } else {
                    state.leading = true
                    continuation.resume(returning: .lead(handedOver: false))
                }
            }
        }
        switch outcome {
        case .done(let result): return try result.get()
        case .lead(let handedOver): if handedOver { await Task.yield() }
        }
        let followers = state.withLock { state in
            let taken = Array(state.waiting.prefix(maxBatch - 1))
            state.waiting.removeFirst(taken.count)
            return taken
        }
        let result: Result<[Output], any Error>
        do {
            let outputs = try await commit([work] + followers.map(\.work))
            precondition(outputs.count == followers.count + 1, "a commit returns one output per piece of work")
            result = .success(outputs)
        } catch {
            result = .failure(error)
        }
        for (index, follower) in followers.enumerated() {
            follower.continuation.resume(returning: .done(result.map { $0[index + 1] }))
        }
        state.withLock { state in
            if state.waiting.isEmpty {
                state.leading = false
            } else {
                state.waiting.removeFirst().continuation.resume(returning: .lead(handedOver: true))
            }
        }
        return try result.get()[0]
    }
}
