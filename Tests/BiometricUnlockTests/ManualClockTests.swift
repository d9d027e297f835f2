import AuditChain
import Testing

@testable import BiometricUnlock
import UnlockSimulation

@Test func advancingMovesTheMonotonicAndTheWallClockTogether() {
    let clock = ManualClock(wallTime: startTime)
    let before = clock.now
    clock.advance(by: .milliseconds(1500))
    #expect(before.duration(to: clock.now) == .milliseconds(1500))
    #expect(clock.currentTime == startTime.adding(.milliseconds(1500)))
    clock.advance(by: .seconds(-5))
    #expect(before.duration(to: clock.now) == .milliseconds(1500), "the monotonic clock never goes back")
}

@Test func settingTheWallTimeLeavesTheMonotonicClock() {
    let clock = ManualClock(wallTime: startTime)
    let before = clock.now
    clock.setWallTime(startTime.adding(.seconds(-3600)))
    #expect(clock.currentTime == startTime.adding(.seconds(-3600)))
    #expect(clock.now == before)
}

@Test func sleepingMovesTheClockToTheDeadlineAtOnce() async throws {
    let clock = ManualClock(wallTime: startTime)
    try await clock.sleep(for: .seconds(30))
    #expect(clock.now == ManualClock.Instant(offset: .seconds(30)))
    #expect(clock.currentTime == startTime.adding(.seconds(30)))
}
