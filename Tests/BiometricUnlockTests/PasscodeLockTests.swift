import AuditChain
import Testing

@testable import BiometricUnlock

@Test func thePasscodeLockIsEnabledUsedAndDisabled() {
    var lock = PasscodeLock()
    #expect(lock.attempt(at: startTime) { true }.events.isEmpty, "off: nothing is checked or logged")
    var events = lock.enable(gracePeriod: .seconds(60))
    #expect(lock.isEnabled && lock.gracePeriod == .seconds(60))
    events += lock.attempt(at: startTime) { false }.events
    let success = lock.attempt(at: startTime) { true }
    #expect(success.accepted)
    events += success.events
    events += lock.disable()
    #expect(lock.disable().isEmpty, "disabling twice logs once")
    #expect(
        summaries(stampedLockScreen(events)) == [
            EventSummary(type: "PASSCODE_LOCK_ENABLED", attributes: ["gracePeriodSeconds": 60]),
            EventSummary(type: "PASSCODE_AUTH_FAILURE", attributes: ["attemptCount": 1]),
            EventSummary(type: "PASSCODE_AUTH_SUCCESS", attributes: ["attemptCount": 2]),
            EventSummary(type: "PASSCODE_LOCK_DISABLED"),
        ]
    )
}

@Test func theGracePeriodSkipsThePasscodeOnlyForAShortAbsence() {
    var lock = PasscodeLock()
    #expect(!lock.isPasscodeRequired(afterBackground: nil), "off")
    _ = lock.enable(gracePeriod: .seconds(60))
    #expect(!lock.isPasscodeRequired(afterBackground: .seconds(60)))
    #expect(lock.isPasscodeRequired(afterBackground: .seconds(61)))
    #expect(lock.isPasscodeRequired(afterBackground: nil), "unknown absence: fail safe")
    #expect(lock.isPasscodeRequired(afterBackground: .seconds(-1)), "impossible absence: fail safe")
    _ = lock.enable(gracePeriod: .seconds(-30))
    #expect(lock.gracePeriod == .zero)
    #expect(lock.isPasscodeRequired(afterBackground: .milliseconds(1)))
}

@Test func wrongPasscodesThrottleAndRefuseUnchecked() {
    var lock = PasscodeLock()
    _ = lock.enable(gracePeriod: .zero)
    var events: [LockScreenAuditEvent] = []
    for _ in 0..<5 { events += lock.attempt(at: startTime) { false }.events }
    #expect(
        events
            == (1...5).map { .passcodeAuthFailure(attemptCount: $0) } + [
                .passcodeAttemptsThrottled(failedAttempts: 5, lockoutMs: 30_000)
            ]
    )
    var checks = 0
    let refused = lock.attempt(at: startTime.adding(.seconds(1))) {
        checks += 1
        return true
    }
    #expect(checks == 0)
    #expect(refused.events == [.passcodeAuthFailure(attemptCount: 6, retryAfterMs: 29_000)])
    let wrongAgain = lock.attempt(at: startTime.adding(.seconds(30))) { false }
    #expect(wrongAgain.retryAfterMs == 60_000, "the next wrong one doubles the lockout")
    #expect(wrongAgain.events.last == .passcodeAttemptsThrottled(failedAttempts: 6, lockoutMs: 60_000))
    #expect(catalogueFailures(stampedLockScreen(events + refused.events + wrongAgain.events)).isEmpty)
}

@Test func forgotPasscodeLogsOutTurnsTheLockOffAndResetsThePins() {
    var lock = PasscodeLock()
    var pins = ConversationPins()
    _ = lock.enable(gracePeriod: .seconds(5))
    _ = pins.pinSet(conversationId: "chat-1")
    for _ in 0..<5 { _ = lock.attempt(at: startTime) { false } }
    let events = lock.forgotPasscode(resetting: &pins)
    #expect(events == [.forgotPasscodeLogout, .conversationPinsReset(reason: .logout, conversationCount: 1)])
    #expect(!lock.isEnabled && lock.throttle == AttemptThrottle())
    #expect(!pins.hasPin("chat-1"))
    #expect(
        summaries(stampedLockScreen(events)) == [
            EventSummary(type: "FORGOT_PASSCODE_LOGOUT"),
            EventSummary(type: "CONVERSATION_PINS_RESET", attributes: ["reason": "LOGOUT", "conversationCount": 1]),
        ]
    )
}
