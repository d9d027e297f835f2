import AuditStore
/// The wall time that expiry uses, hardened against clock jumps.
///
/// The rule (docs/DELIVERY.md, "Clocks"): each reading pairs the wall clock with the monotonic clock. When the
/// wall clock moved within `tolerance` of what the monotonic clock says elapsed, the effective time is the
/// wall time. When it jumped (forward or back by more than `tolerance`), the effective time advances by the
/// monotonic elapsed time instead, and the offset is kept until the wall clock comes back within tolerance.
/// So a jump of hours neither expires every pending entry nor keeps entries forever: ages keep growing at the
/// real rate. After a restart (no monotonic continuity) the effective time restarts from the wall clock, but
/// never before the last effective time persisted.
public struct EffectiveClock: Sendable, Hashable {
    /// The jump tolerance.
    public var tolerance: Duration
    /// The last effective time (milliseconds since the epoch), if any.
    public private(set) var effective: Int64?
    /// The monotonic reading that went with it.
    public private(set) var monotonic: Duration?
    /// Jumps seen so far.
    public private(set) var jumps = 0
    /// Whether the wall clock is currently away from the effective time.
    public private(set) var jumped = false

    /// Creates a clock.
    /// - Parameters:
    ///   - tolerance: the largest wall/monotonic disagreement that is not a jump.
    ///   - persisted: the last effective time saved before a restart.
    public init(tolerance: Duration, persisted: Int64? = nil) {
        self.tolerance = tolerance
        self.effective = persisted
    }

    /// Takes a reading and returns the effective time in milliseconds since the epoch.
    public mutating func now(wall: Int64, monotonic now: Duration) -> Int64 {
        defer { monotonic = now }
        guard let last = effective else {
            effective = wall
            return wall
        }
        guard let lastMonotonic = monotonic else {
            // First reading after a restart: trust the wall clock unless it went backwards.
            effective = max(wall, last)
            return effective!
        }
        // Saturating: `last` may come from a tampered database (Int64.max), and abs(Int64.min) traps.
        let expected = Self.saturatingSum(last, (now - lastMonotonic).milliseconds)
        let (difference, overflow) = wall.subtractingReportingOverflow(expected)
        if !overflow, difference.magnitude <= tolerance.milliseconds.magnitude {
            effective = max(wall, last)
            jumped = false
        } else {
            if !jumped { jumps += 1 }
            jumped = true
            effective = expected
        }
        return effective!
    }

    private static func saturatingSum(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        guard overflow else { return sum }
        return rhs > 0 ? .max : .min
    }
}
