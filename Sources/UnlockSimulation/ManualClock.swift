public import BiometricUnlock
public import AuditChain
import Synchronization

/// A clock that moves only when told: the monotonic `Clock` and the ``WallClock`` of tests and simulations.
///
/// ``advance(by:)`` moves both; ``setWallTime(_:)`` moves only the wall clock, as a user changing the date would.
/// `sleep(until:)` does not wait: it moves the clock to the deadline, so virtual time passes deterministically.
public final class ManualClock: Clock, WallClock, Sendable {
    /// A point on the monotonic axis: the time since the clock was created.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration

        /// Creates an instant.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Ordered by offset.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// The offset.
        public var description: String { "\(offset)" }
    }

    private struct Reading {
        var offset: Duration
        var wallMilliseconds: Int64
    }

    private let reading: Mutex<Reading>

    /// Creates a clock at monotonic zero showing `wallTime`.
    public init(wallTime: AuditTimestamp = AuditTimestamp(millisecondsSinceEpoch: 1_767_225_600_000)) {
        reading = Mutex(Reading(offset: .zero, wallMilliseconds: wallTime.millisecondsSinceEpoch))
    }

    /// The monotonic now.
    public var now: Instant { Instant(offset: reading.withLock { $0.offset }) }
    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }
    /// The wall-clock now.
    public var currentTime: AuditTimestamp {
        AuditTimestamp(millisecondsSinceEpoch: reading.withLock { $0.wallMilliseconds })
    }

    /// Moves both clocks forward by `duration` (ignored if negative).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        reading.withLock {
            $0.offset += duration
            $0.wallMilliseconds += duration.wholeMilliseconds
        }
    }

    /// Sets the wall clock alone (forward or back), leaving the monotonic clock where it is.
    public func setWallTime(_ time: AuditTimestamp) {
        reading.withLock { $0.wallMilliseconds = time.millisecondsSinceEpoch }
    }

    /// Moves the clock to `deadline` (if later) at once; throws if the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        advance(by: now.duration(to: deadline))
    }
}
