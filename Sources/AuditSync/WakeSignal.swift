import Synchronization

/// Wakes a waiting loop early: `signal()` ends the current (or next) `wait(upTo:)`.
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextId = 0
    }

    private let state = Mutex(State())

    /// Creates a signal.
    public init() {}

    /// Ends the current wait, or the next one if nobody waits.
    public func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.pending = true
                return []
            }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for a signal, at most `timeout`, or until the task is cancelled.
    public func wait(upTo timeout: Duration) async {
        await wait(upTo: timeout, on: ContinuousClock())
    }

    /// Waits for a signal, at most `timeout` on `clock`, or until the task is cancelled.
    public func wait<C: Clock<Duration>>(upTo timeout: Duration, on clock: C) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(for: timeout) }
            group.addTask { await self.waitForSignal() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
