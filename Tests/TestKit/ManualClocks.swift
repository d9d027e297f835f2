package import AuditChain
import AuditStore
package import AuditSync
import AuditWire
import Synchronization

/// Manual clocks, the engine's test double: a monotonic `Clock`, a wall clock and a fixed jitter in one. Time moves
/// only when a test says so; `sleep` returns when the test advances the clock past its deadline (or the task is
/// cancelled), so hours of outage run without sleeping.
package final class ManualClocks: Clock, DeliveryWallClock, JitterSource, Sendable {
    /// A point on the monotonic axis: the time since monotonic zero.
    package struct Instant: InstantProtocol {
        package var offset: Duration

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var monotonic: Duration
        var wall: Int64
        var random = 0.5
        var sleepers: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextSleeper = 0
    }

    private let state: Mutex<State>

    /// Creates clocks at `monotonic` showing wall time `wall` (milliseconds). Tests that talk to a live collector
    /// pass the system's wall time (its receipts carry real times).
    package init(monotonic: Duration = .zero, wall: Int64 = 1_795_000_000_000) {
        state = Mutex(State(monotonic: monotonic, wall: wall))
    }

    /// The engine's clocks: monotonic times count from monotonic zero, so they read like ``monotonic``.
    package var clocks: SyncEngine.Clocks {
        SyncEngine.Clocks(monotonic: self, origin: Instant(offset: .zero), wall: self, jitter: self)
    }

    package var wall: Int64 { state.withLock { $0.wall } }
    package var monotonic: Duration { state.withLock { $0.monotonic } }
    /// Sleeps waiting for the clock to reach their deadline.
    package var sleepers: Int { state.withLock { $0.sleepers.count } }

    package var now: Instant { Instant(offset: monotonic) }
    package var minimumResolution: Duration { .nanoseconds(1) }
    package var currentTime: AuditTimestamp { AuditTimestamp(millisecondsSinceEpoch: wall) }
    package func unit() -> Double { state.withLock { $0.random } }

    /// Both clocks move together; sleepers whose deadline passed wake.
    package func advance(_ duration: Duration) {
        let woken = state.withLock { state in
            state.monotonic += duration
            state.wall += duration.milliseconds
            let due = state.sleepers.filter { $0.value.deadline <= state.monotonic }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Only the wall clock moves (a clock jump).
    package func jumpWall(_ milliseconds: Int64) { state.withLock { $0.wall += milliseconds } }

    /// Returns once the clock reaches `deadline`; throws `CancellationError` if the task is cancelled first.
    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline.offset <= state.monotonic { return .success(()) }
                    state.sleepers[id] = (deadline.offset, continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
