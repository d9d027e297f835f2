import AuditChain
import Testing

@testable import BiometricUnlock

/// Stamps lock-screen events as the app would before giving them to its audit sink.
func stampedLockScreen(_ events: [LockScreenAuditEvent]) -> [AuditEvent] {
    events.enumerated().map { index, event in
        event.auditEvent(
            occurredAt: startTime,
            userId: Fixture.userId,
            deviceId: Fixture.deviceId,
            idempotencyKey: "k\(index)"
        )
    }
}

@Test func aConversationPinIsSetVerifiedAndRemoved() {
    var pins = ConversationPins()
    var events = pins.pinSet(conversationId: "chat-1")
    #expect(pins.hasPin("chat-1") && !pins.hasPin("chat-2"))
    let verified = pins.attempt(conversationId: "chat-1", at: startTime) { true }
    #expect(verified.accepted && verified.retryAfterMs == nil)
    events += verified.events
    events += pins.pinRemoved(conversationId: "chat-1")
    #expect(pins.pinRemoved(conversationId: "chat-1").isEmpty, "removing twice logs once")
    #expect(
        events == [
            .conversationPinSet(conversationId: "chat-1"),
            .conversationPinVerified(conversationId: "chat-1", attemptCount: 1),
            .conversationPinRemoved(conversationId: "chat-1"),
        ]
    )
    #expect(
        summaries(stampedLockScreen(events)) == [
            EventSummary(type: "CONVERSATION_PIN_SET", attributes: ["conversationId": "chat-1"]),
            EventSummary(
                type: "CONVERSATION_PIN_VERIFIED",
                attributes: ["conversationId": "chat-1", "attemptCount": 1]
            ),
            EventSummary(type: "CONVERSATION_PIN_REMOVED", attributes: ["conversationId": "chat-1"]),
        ]
    )
    let none = pins.attempt(conversationId: "chat-1", at: startTime) {
        Issue.record("a conversation without a PIN checks nothing")
        return true
    }
    #expect(!none.accepted && none.events.isEmpty)
}

@Test func wrongPinsLockOneConversationOutAndRefuseUnchecked() {
    var pins = ConversationPins()
    _ = pins.pinSet(conversationId: "chat-1")
    _ = pins.pinSet(conversationId: "chat-2")
    var events: [LockScreenAuditEvent] = []
    for _ in 0..<5 { events += pins.attempt(conversationId: "chat-1", at: startTime) { false }.events }
    #expect(
        events
            == (1...5).map { .conversationPinFailed(conversationId: "chat-1", attemptCount: $0) } + [
                .conversationPinLockedOut(conversationId: "chat-1", failedAttempts: 5, lockoutMs: 30_000)
            ]
    )
    var checks = 0
    let refused = pins.attempt(conversationId: "chat-1", at: startTime.adding(.seconds(10))) {
        checks += 1
        return true
    }
    #expect(checks == 0, "the PIN is not checked during the lockout")
    #expect(!refused.accepted && refused.retryAfterMs == 20_000)
    #expect(refused.events == [.conversationPinFailed(conversationId: "chat-1", attemptCount: 6, retryAfterMs: 20_000)])
    #expect(
        pins.attempt(conversationId: "chat-2", at: startTime) { true }.accepted,
        "other conversations are unaffected"
    )
    let after = pins.attempt(conversationId: "chat-1", at: startTime.adding(.seconds(30))) { true }
    #expect(after.accepted)
    #expect(after.events == [.conversationPinVerified(conversationId: "chat-1", attemptCount: 6)])
    #expect(catalogueFailures(stampedLockScreen(events + refused.events + after.events)).isEmpty)
}

@Test func aClockSetBackDoesNotEndAPinLockoutEarly() {
    var pins = ConversationPins()
    _ = pins.pinSet(conversationId: "c")
    for _ in 0..<5 { _ = pins.attempt(conversationId: "c", at: startTime) { false } }
    let earlier = startTime.adding(.seconds(-3600))
    #expect(pins.attempt(conversationId: "c", at: earlier) { true }.retryAfterMs == 30_000)
    #expect(pins.attempt(conversationId: "c", at: earlier.adding(.seconds(29))) { true }.retryAfterMs == 1000)
    #expect(
        pins.attempt(conversationId: "c", at: startTime.adding(.seconds(60)), monotonicElapsedSinceLockout: .seconds(5))
        { true }.retryAfterMs != nil
    )
    #expect(pins.attempt(conversationId: "c", at: earlier.adding(.seconds(30))) { true }.accepted)
}

@Test func logoutRemovesEveryPinAndSaysHowMany() {
    var pins = ConversationPins()
    _ = pins.pinSet(conversationId: "a")
    _ = pins.pinSet(conversationId: "b")
    let reset = pins.logout()
    #expect(reset == [.conversationPinsReset(reason: .logout, conversationCount: 2)])
    #expect(!pins.hasPin("a") && !pins.hasPin("b"))
    #expect(pins.logout() == [.conversationPinsReset(reason: .logout, conversationCount: 0)])
    #expect(
        summaries(stampedLockScreen(reset)) == [
            EventSummary(type: "CONVERSATION_PINS_RESET", attributes: ["reason": "LOGOUT", "conversationCount": 2])
        ]
    )
}

@Test func everyLockScreenEventPassesTheCatalogueWithItsValuesClamped() {
    let all: [LockScreenAuditEvent] = [
        .conversationPinSet(conversationId: ""),
        .conversationPinRemoved(conversationId: String(repeating: "é", count: 200)),
        .conversationPinVerified(conversationId: "c", attemptCount: 0),
        .conversationPinFailed(conversationId: "c", attemptCount: .max, retryAfterMs: -4),
        .conversationPinLockedOut(conversationId: "c", failedAttempts: -1, lockoutMs: 0),
        .conversationPinsReset(reason: .logout, conversationCount: -2), .passcodeLockEnabled(gracePeriodSeconds: -1),
        .passcodeLockDisabled, .passcodeAuthSuccess(attemptCount: 0), .passcodeAuthFailure(attemptCount: 2),
        .passcodeAuthFailure(attemptCount: 6, retryAfterMs: .max),
        .passcodeAttemptsThrottled(failedAttempts: 5, lockoutMs: 1),
        .forgotPasscodeLogout,
    ]
    let events = stampedLockScreen(all)
    #expect(catalogueFailures(events).isEmpty)
    #expect(Set(events.map(\.type)).count == 12)
    #expect(events[0].attributes["conversationId"] == "unknown")
    #expect(events[1].attributes["conversationId"] == .string(String(repeating: "é", count: 128)))
    #expect(events[3].attributes["retryAfterMs"] == 0)
    #expect(events[4].attributes["lockoutMs"] == 1)
    #expect(events[5].attributes["conversationCount"] == 0)
    for event in all {
        for name in event.attributes.keys { #expect(SecretAttributeRule.secretWord(in: name) == nil, "\(name)") }
    }
}
