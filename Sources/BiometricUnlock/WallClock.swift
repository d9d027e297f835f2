public import AuditChain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock: events' `occurredAt` and the policy's notion of "now". It can be wrong or changed by the user,
/// which is why the policy cross-checks it (``UnlockPolicyEngine/isClockConsistent(_:)``).
public protocol WallClock: Sendable {
    /// The current time.
    var currentTime: AuditTimestamp { get }
}

/// The system's real-time clock.
public struct SystemWallClock: WallClock {
    /// Creates the clock.
    public init() {}

    /// `clock_gettime(CLOCK_REALTIME)` in whole milliseconds.
    public var currentTime: AuditTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return AuditTimestamp(millisecondsSinceEpoch: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
