import AuditChain
import AuditStore
import AuditSync
import AuditWire
import Foundation
import Synchronization

/// Manual clocks for the engine: backoff never sleeps, while requests run on the real network. A monotonic `Clock`,
/// a wall clock and a fixed jitter in one (the same double as AuditQueueTests' `ManualClocks`; the two test targets
/// share no helper target that depends on AuditQueue). Time moves only when a test says so; `sleep` returns when the
/// test advances the clock past its deadline. The wall clock starts at the real time so that entries sealed now are
/// not expired by the 72-hour rule.
final class SyncTestClocks: Clock, DeliveryWallClock, JitterSource, Sendable {
    /// A point on the monotonic axis: the time since monotonic zero.
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var monotonic: Duration
        var wall: Int64
        var random = 0.5
        var sleepers: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextSleeper = 0
    }

    private let state: Mutex<State>

    /// Creates clocks at `monotonic` showing wall time `wall` (milliseconds).
    init(monotonic: Duration = .seconds(1000), wall: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) {
        state = Mutex(State(monotonic: monotonic, wall: wall))
    }

    /// The engine's clocks: monotonic times count from monotonic zero, so they read like ``monotonic``.
    var clocks: SyncEngine.Clocks {
        SyncEngine.Clocks(monotonic: self, origin: Instant(offset: .zero), wall: self, jitter: self)
    }

    var wall: Int64 { state.withLock { $0.wall } }
    var monotonic: Duration { state.withLock { $0.monotonic } }
    /// Sleeps waiting for the clock to reach their deadline.
    var sleepers: Int { state.withLock { $0.sleepers.count } }

    var now: Instant { Instant(offset: monotonic) }
    var minimumResolution: Duration { .nanoseconds(1) }
    var currentTime: AuditTimestamp { AuditTimestamp(millisecondsSinceEpoch: wall) }
    func unit() -> Double { state.withLock { $0.random } }

    /// Both clocks move together; sleepers whose deadline passed wake.
    func advance(_ duration: Duration) {
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
    func jumpWall(_ milliseconds: Int64) { state.withLock { $0.wall += milliseconds } }

    /// Returns once the clock reaches `deadline`; throws `CancellationError` if the task is cancelled first.
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
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
