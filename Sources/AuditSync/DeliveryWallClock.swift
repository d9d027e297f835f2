public import AuditChain
import Foundation

/// The wall clock delivery reads: expiry (through ``EffectiveClock``), the time of the last answer, the age of the
/// collector's lag, a `Retry-After` given as a date.
///
/// Swift's `Clock` types are monotonic (`ContinuousClock`, `SuspendingClock`) and there is no wall-clock `Clock` on
/// Linux, so wall time is this one-requirement protocol beside the monotonic `Clock` (``SyncEngine/Clocks``). The
/// wall clock can be wrong or stepped; the engine never measures a duration with it. The requirement is the one of
/// BiometricUnlock's `WallClock`, so one type can serve both.
public protocol DeliveryWallClock: Sendable {
    /// The current time.
    var currentTime: AuditTimestamp { get }
}

/// The system's wall clock (`Date()`), in whole milliseconds.
public struct SystemDeliveryWallClock: DeliveryWallClock {
    /// Creates the clock.
    public init() {}

    /// The current time, truncated to milliseconds.
    public var currentTime: AuditTimestamp {
        AuditTimestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000))
    }
}
