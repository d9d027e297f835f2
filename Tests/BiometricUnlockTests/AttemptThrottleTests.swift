import AuditChain
import Testing

@testable import BiometricUnlock

@Test func theLockoutStartsAtTheThresholdAndDoublesUpToTheCap() {
    let settings = AttemptThrottleSettings()
    let table: [(Int, Int64)] = [
        (0, 0), (4, 0), (5, 30_000), (6, 60_000), (7, 120_000), (11, 1_920_000), (12, 3_600_000), (40, 3_600_000),
        (.max, 3_600_000),
    ]
    for (failures, lockout) in table {
        #expect(settings.lockoutMilliseconds(afterFailures: failures) == lockout, "\(failures) failures")
    }
}

@Test func impossibleSettingsAreReadSafely() {
    let zero = AttemptThrottleSettings(maxFailedAttempts: 0, initialLockout: .zero, maximumLockout: .seconds(-5))
    #expect(zero.lockoutMilliseconds(afterFailures: 0) == 0)
    #expect(zero.lockoutMilliseconds(afterFailures: 1) == 1, "at least one failure and one millisecond")
    #expect(zero.lockoutMilliseconds(afterFailures: 100) == 1, "the cap is never below the initial lockout")
    let huge = AttemptThrottleSettings(
        maxFailedAttempts: 1,
        initialLockout: .seconds(Int64.max / 2),
        maximumLockout: .seconds(Int64.max)
    )
    #expect(huge.lockoutMilliseconds(afterFailures: 70) == .max, "doubling saturates instead of overflowing")
}

@Test func failuresCountAndTheThresholdStartsALockout() {
    var throttle = AttemptThrottle()
    let settings = AttemptThrottleSettings()
    for attempt in 1...4 {
        #expect(throttle.nextAttemptNumber == attempt)
        #expect(throttle.recordFailure(at: startTime, settings: settings) == nil)
    }
    let lockout = throttle.recordFailure(at: startTime, settings: settings)
    #expect(lockout == AttemptLockout(startedAt: startTime, durationMilliseconds: 30_000))
    #expect(throttle.failedAttempts == 5)
    #expect(throttle.remainingMilliseconds(now: startTime) == 30_000)
    #expect(throttle.remainingMilliseconds(now: startTime.adding(.seconds(10))) == 20_000)
    #expect(throttle.remainingMilliseconds(now: startTime.adding(.seconds(30))) == 0)
    throttle.recordSuccess()
    #expect(throttle == AttemptThrottle())
    #expect(throttle.remainingMilliseconds(now: startTime) == 0)
}

@Test func bothClocksMustSayTheLockoutIsOver() {
    let throttle = AttemptThrottle(
        failedAttempts: 5,
        lockout: AttemptLockout(startedAt: startTime, durationMilliseconds: 30_000)
    )
    let later = startTime.adding(.seconds(3600))
    #expect(throttle.remainingMilliseconds(now: later, monotonicElapsed: .seconds(10)) == 20_000, "wall jumped ahead")
    #expect(throttle.remainingMilliseconds(now: later, monotonicElapsed: .seconds(30)) == 0)
    #expect(
        throttle.remainingMilliseconds(now: startTime.adding(.seconds(5)), monotonicElapsed: .seconds(60)) == 25_000
    )
    #expect(throttle.remainingMilliseconds(now: later, monotonicElapsed: .seconds(-1)) == 30_000)
}

@Test func aWallClockBehindTheLockoutFailsSafeAndARefusalRestartsIt() {
    var throttle = AttemptThrottle(
        failedAttempts: 5,
        lockout: AttemptLockout(startedAt: startTime, durationMilliseconds: 30_000)
    )
    let earlier = startTime.adding(.seconds(-86_400))
    #expect(throttle.isClockBehindLockout(now: earlier))
    #expect(throttle.remainingMilliseconds(now: earlier) == 30_000)
    let absurd = AuditTimestamp(millisecondsSinceEpoch: .min)
    #expect(throttle.remainingMilliseconds(now: absurd) == 30_000, "no overflow on an absurd reading")
    throttle.noteRefusal(at: startTime.adding(.seconds(10)))
    #expect(throttle.lockout?.startedAt == startTime, "a clock ahead of the start changes nothing")
    throttle.noteRefusal(at: earlier)
    #expect(throttle.lockout == AttemptLockout(startedAt: earlier, durationMilliseconds: 30_000))
    #expect(throttle.failedAttempts == 5)
    #expect(throttle.remainingMilliseconds(now: earlier.adding(.seconds(30))) == 0)
}

@Test func aTamperedStateIsReadWithinBounds() {
    #expect(AttemptThrottle(failedAttempts: -7).nextAttemptNumber == 1)
    #expect(AttemptThrottle(failedAttempts: .max).nextAttemptNumber == Int(Int32.max))
    let negative = AttemptThrottle(
        failedAttempts: 5,
        lockout: AttemptLockout(startedAt: startTime, durationMilliseconds: -1)
    )
    #expect(negative.remainingMilliseconds(now: startTime) == 0)
}

@Test func oneAttemptIsRefusedUncheckedDuringALockoutElseCheckedAndCounted() {
    let settings = AttemptThrottleSettings(
        maxFailedAttempts: 2,
        initialLockout: .seconds(10),
        maximumLockout: .seconds(60)
    )
    let start = AuditTimestamp(millisecondsSinceEpoch: 1_000_000)
    var throttle = AttemptThrottle()
    var checks = 0
    let wrong: () -> Bool = {
        checks += 1
        return false
    }
    #expect(
        throttle.attempt(at: start, monotonicElapsed: nil, settings: settings, check: wrong)
            == .failed(attemptCount: 1, failedAttempts: 1, lockout: nil)
    )
    #expect(
        throttle.attempt(at: start, monotonicElapsed: nil, settings: settings, check: wrong)
            == .failed(
                attemptCount: 2,
                failedAttempts: 2,
                lockout: AttemptLockout(startedAt: start, durationMilliseconds: 10_000)
            )
    )
    let later = AuditTimestamp(millisecondsSinceEpoch: 1_004_000)
    #expect(
        throttle.attempt(at: later, monotonicElapsed: nil, settings: settings, check: wrong)
            == .refused(attemptCount: 3, retryAfterMs: 6_000)
    )
    #expect(checks == 2, "a refused attempt is not checked")
    let after = AuditTimestamp(millisecondsSinceEpoch: 1_010_000)
    #expect(
        throttle.attempt(at: after, monotonicElapsed: nil, settings: settings) { true } == .accepted(attemptCount: 3)
    )
    #expect(throttle == AttemptThrottle(), "a success clears the count and the lockout")
}
