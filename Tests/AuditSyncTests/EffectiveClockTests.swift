import AuditSync
import Testing

/// The clock-jump rule of docs/DELIVERY.md ("Clocks"), reading by reading: within tolerance the wall clock, across
/// a jump either way the monotonic clock, never before the last effective time, and a persisted floor on restart.
@Suite("EffectiveClock")
struct EffectiveClockTests {
    static let start: Int64 = 1_795_000_000_000
    static let hour: Int64 = 3_600_000
    static let tolerance = Duration.seconds(300)

    /// A clock that read `start` at monotonic zero.
    static func started() -> EffectiveClock {
        var clock = EffectiveClock(tolerance: tolerance)
        #expect(clock.now(wall: start, monotonic: .zero) == start)
        return clock
    }

    @Test("the first reading is the wall time; later ones follow the wall clock while it agrees")
    func followsWall() {
        var clock = Self.started()
        #expect(clock.now(wall: Self.start + 60_000, monotonic: .seconds(60)) == Self.start + 60_000)
        // A drift within tolerance either way is not a jump.
        #expect(clock.now(wall: Self.start + 120_000 + 200_000, monotonic: .seconds(120)) == Self.start + 320_000)
        #expect(clock.jumps == 0)
        #expect(!clock.jumped)
    }

    @Test("a step back within tolerance never takes the effective time back")
    func neverBackWithinTolerance() {
        var clock = Self.started()
        #expect(clock.now(wall: Self.start - 100_000, monotonic: .seconds(60)) == Self.start)
        #expect(clock.jumps == 0)
        #expect(clock.now(wall: Self.start + 70_000, monotonic: .seconds(70)) == Self.start + 70_000)
    }

    @Test("exactly the tolerance is not a jump; a millisecond more is")
    func toleranceBoundary() {
        var clock = Self.started()
        #expect(clock.now(wall: Self.start + 60_000 + 300_000, monotonic: .seconds(60)) == Self.start + 360_000)
        #expect(clock.jumps == 0)
        var other = Self.started()
        #expect(other.now(wall: Self.start + 60_000 + 300_001, monotonic: .seconds(60)) == Self.start + 60_000)
        #expect(other.jumps == 1)
        #expect(other.jumped)
    }

    @Test(
        "across a jump either way the effective time advances at the monotonic rate while the wall stays away",
        arguments: [36_000_000, -36_000_000, 3_600_000_000, -1_795_000_000_000] as [Int64]
    )
    func jump(offset: Int64) {
        var clock = Self.started()
        #expect(clock.now(wall: Self.start + 60_000 + offset, monotonic: .seconds(60)) == Self.start + 60_000)
        #expect(clock.jumped)
        #expect(clock.now(wall: Self.start + 3_660_000 + offset, monotonic: .seconds(3660)) == Self.start + 3_660_000)
        // Still away: the same excursion, one jump.
        #expect(clock.jumps == 1)
        // The wall clock comes back within tolerance: it is followed again.
        #expect(clock.now(wall: Self.start + 3_720_000, monotonic: .seconds(3720)) == Self.start + 3_720_000)
        #expect(!clock.jumped)
        // A second excursion counts again.
        #expect(clock.now(wall: Self.start - offset, monotonic: .seconds(3780)) == Self.start + 3_780_000)
        #expect(clock.jumps == 2)
    }

    @Test("after a restart the wall clock is trusted, but never before the persisted time")
    func restart() {
        var later = EffectiveClock(tolerance: Self.tolerance, persisted: Self.start)
        #expect(later.now(wall: Self.start + Self.hour, monotonic: .seconds(5)) == Self.start + Self.hour)
        var earlier = EffectiveClock(tolerance: Self.tolerance, persisted: Self.start)
        #expect(earlier.now(wall: Self.start - 10 * Self.hour, monotonic: .seconds(5)) == Self.start)
        // From then on the wall clock still 10 h back is a jump, and time goes on at the monotonic rate.
        #expect(earlier.now(wall: Self.start - 10 * Self.hour + 60_000, monotonic: .seconds(65)) == Self.start + 60_000)
        #expect(earlier.jumps == 1)
    }

    @Test("a tampered persisted time at the limits of Int64 saturates instead of trapping")
    func overflow() {
        var clock = EffectiveClock(tolerance: Self.tolerance, persisted: .max)
        #expect(clock.now(wall: Self.start, monotonic: .zero) == .max)
        #expect(clock.now(wall: Self.start, monotonic: .seconds(60)) == .max)
        #expect(clock.now(wall: .min, monotonic: .seconds(120)) == .max)
        #expect(clock.jumped)
        var low = EffectiveClock(tolerance: Self.tolerance, persisted: .min)
        #expect(low.now(wall: .min, monotonic: .zero) == .min)
        #expect(low.now(wall: .max, monotonic: .seconds(1)) == .min + 1000)
        #expect(low.jumps == 1)
    }
}
