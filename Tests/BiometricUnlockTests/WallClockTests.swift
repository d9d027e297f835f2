import AuditChain
import Testing

@testable import BiometricUnlock

@Test func theSystemWallClockReadsTheCurrentTime() {
    let time = SystemWallClock().currentTime
    #expect(time > startTime.adding(.seconds(-365 * 86_400)), "after 2025")
    #expect(time < .maximum)
}
