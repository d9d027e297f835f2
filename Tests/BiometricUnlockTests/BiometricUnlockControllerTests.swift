import AuditChain
import Testing

@testable import BiometricUnlock
import UnlockSimulation
import TestKit

@Test func aFreshInstallRequiresThePasswordAndLogsTheFallbackWithEveryField() async {
    let harness = Harness()
    let result = await harness.controller.start()
    #expect(result.state == .requirePassword)
    #expect(result.passwordReason == .firstUnlock)
    #expect(result.transitions == [UnlockTransition(from: .startupCheck, to: .requirePassword)])
    #expect(
        result.emittedEvents == [
            AuditEvent(
                type: "PASSWORD_AUTH_FALLBACK",
                occurredAt: startTime,
                userId: Fixture.userId,
                deviceId: Fixture.deviceId,
                attributes: ["reason": "FIRST_UNLOCK"],
                idempotencyKey: "bio-1"
            )
        ]
    )
    #expect(harness.sink.events == result.emittedEvents)
    #expect(harness.authenticator.prompts.isEmpty)
}

@Test func thePasswordUnlocksReleasesTheSessionSecretAndWipesThePassword() async {
    let harness = Harness()
    _ = await harness.controller.start()
    harness.clock.advance(by: .seconds(3))
    var password = Fixture.password
    let result = await harness.controller.submitPassword(&password)
    #expect(result.state == .unlocked)
    #expect(result.sessionSecret?.bytes == Fixture.sessionSecret)
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "PASSWORD_AUTH_SUCCESS", attributes: ["attemptCount": 1, "reason": "FIRST_UNLOCK"])
        ]
    )
    #expect(password.allSatisfy { $0 == 0 })
    #expect(
        harness.keyStore.storedRecord
            == UnlockRecord(
                lastStrongAuthenticationAt: startTime.adding(.seconds(3)),
                failedBiometricAttempts: 0,
                bootSessionAtLastUnlock: "boot-1"
            )
    )
}

@Test func aWrongPasswordStaysInRequirePasswordWithERR107010() async {
    let harness = Harness()
    _ = await harness.controller.start()
    let result = await harness.submit(Fixture.wrongPassword)
    #expect(result.state == .requirePassword)
    #expect(result.sessionSecret == nil)
    #expect(result.errorCodes == [.badPassword])
    #expect(result.passwordReason == .firstUnlock)
}

@Test func aPasswordOutsideAPasswordStateIsNotCheckedButStillWiped() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    let verifications = harness.verifier.verifications
    var password = Fixture.password
    let result = await harness.controller.submitPassword(&password)
    #expect(!result.inputAccepted)
    #expect(result.state == .locked)
    #expect(result.sessionSecret == nil)
    #expect(harness.verifier.verifications == verifications)
    #expect(password.allSatisfy { $0 == 0 })
}

@Test func aBiometricUnlockOpensTheEnvelopeAndLogsItsMonotonicDuration() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.clock.advance(by: .seconds(60))
    harness.authenticator.enqueue(.init(.success, takes: .milliseconds(850)))
    let result = await harness.controller.foreground()
    #expect(result.state == .unlocked)
    #expect(
        result.transitions == [
            UnlockTransition(from: .locked, to: .startupCheck),
            UnlockTransition(from: .startupCheck, to: .promptBiometric),
            UnlockTransition(from: .promptBiometric, to: .unlocked),
        ]
    )
    #expect(result.sessionSecret?.bytes == Fixture.sessionSecret)
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "BIOMETRIC_AUTH_SUCCESS", attributes: ["unlockDurationMs": 850])
        ]
    )
    #expect(harness.authenticator.prompts == ["Unlock the audit log"])
    #expect(result.errors.isEmpty)
}

@Test func threeFailedAttemptsLogEachFailureThenLockout() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.authenticator.enqueue(.init(.failed), .init(.failed), .init(.failed))
    let first = await harness.controller.foreground()
    #expect(first.state == .biometricFailed)
    #expect(first.errorCodes == [.recognitionFailed])
    let second = await harness.controller.retryBiometric()
    #expect(second.state == .biometricFailed)
    let third = await harness.controller.retryBiometric()
    #expect(third.state == .requirePassword)
    #expect(third.passwordReason == .lockout)
    #expect(
        summaries(first.emittedEvents + second.emittedEvents + third.emittedEvents) == [
            EventSummary(type: "BIOMETRIC_AUTH_FAILURE", attributes: ["attemptCount": 1, "errorCode": "ERR-107-030"]),
            EventSummary(type: "BIOMETRIC_AUTH_FAILURE", attributes: ["attemptCount": 2, "errorCode": "ERR-107-030"]),
            EventSummary(type: "BIOMETRIC_AUTH_FAILURE", attributes: ["attemptCount": 3, "errorCode": "ERR-107-030"]),
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "LOCKOUT"]),
        ]
    )
    #expect(harness.keyStore.storedRecord?.failedBiometricAttempts == 3)
    let unlocked = await harness.submit()
    #expect(unlocked.isUnlocked)
    #expect(harness.keyStore.storedRecord?.failedBiometricAttempts == 0)
}

@Test func theFailedAttemptCounterSurvivesARelaunch() async throws {
    let keyStore = InMemorySecureKeyStore()
    let clock = ManualClock(wallTime: startTime)
    let first = Harness(keyStore: keyStore, clock: clock)
    try await first.enrolledAndLocked()
    first.authenticator.enqueue(.init(.failed), .init(.failed), .init(.failed))
    _ = await first.controller.foreground()
    _ = await first.controller.retryBiometric()
    _ = await first.controller.retryBiometric()
    let relaunched = Harness(keyStore: keyStore, clock: clock)
    let result = await relaunched.controller.start()
    #expect(result.passwordReason == .lockout)
    #expect(relaunched.authenticator.prompts.isEmpty)
}

@Test func aCancelledPromptOffersThePasswordAtOnce() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.authenticator.enqueue(.init(.cancelled))
    let result = await harness.controller.foreground()
    #expect(result.state == .requirePassword)
    #expect(result.passwordReason == .promptCancelled)
    #expect(result.errorCodes == [.promptCancelled])
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "PROMPT_CANCELLED"])
        ]
    )
}

@Test func choosingThePasswordAfterAFailure() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.authenticator.enqueue(.init(.failed))
    _ = await harness.controller.foreground()
    let result = await harness.controller.usePassword()
    #expect(result.state == .requirePassword)
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "USER_CHOSE_PASSWORD"])
        ]
    )
}

@Test func aBiometricSetChangeFoundAtStartupRevokesPurgesAndRequiresThePassword() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.keyStore.simulateBiometricSetChange()
    let result = await harness.controller.foreground()
    #expect(result.state == .revoked)
    #expect(result.passwordReason == .biometricRevoked)
    #expect(result.errorCodes == [.biometricSetChanged])
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "BIOMETRIC_REVOKED_SYSTEM_CHANGE"),
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "BIOMETRIC_REVOKED"]),
        ]
    )
    #expect(harness.keyStore.storedKey == nil && harness.keyStore.storedEnvelope == nil)
    #expect(harness.authenticator.prompts.isEmpty)
    #expect(await harness.submit().isUnlocked)
    _ = await harness.controller.lock()
    let next = await harness.controller.foreground()
    #expect(next.passwordReason == .firstUnlock, "biometric unlock stays off until enabled again")
}

@Test func aKeyInvalidatedDuringThePromptIsRefusedAndRevoked() async throws {
    let authenticator = HookedAuthenticator(result: .success)
    let harness = Harness(authenticator: authenticator)
    try await harness.enrolledAndLocked()
    let keyStore = harness.keyStore
    authenticator.setHook { keyStore.simulateBiometricSetChange() }
    let result = await harness.controller.foreground()
    #expect(result.state == .revoked)
    #expect(result.sessionSecret == nil)
    #expect(result.emittedEvents.map(\.type) == ["BIOMETRIC_REVOKED_SYSTEM_CHANGE", "PASSWORD_AUTH_FALLBACK"])
    #expect(keyStore.storedKey == nil)
}

@Test func aBiometricSetChangeWhileUnlockedDiscardsTheSession() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.authenticator.enqueue(.init(.success))
    _ = await harness.controller.foreground()
    let unchanged = await harness.controller.biometricSetDidChange()
    #expect(!unchanged.inputAccepted, "the key store does not confirm a change")
    #expect(unchanged.state == .unlocked)
    harness.keyStore.simulateBiometricSetChange()
    let result = await harness.controller.biometricSetDidChange()
    #expect(result.state == .revoked)
    #expect(result.sessionDiscarded)
    #expect(result.emittedEvents.map(\.type) == ["BIOMETRIC_REVOKED_SYSTEM_CHANGE", "PASSWORD_AUTH_FALLBACK"])
    #expect(harness.keyStore.storedKey == nil)
}

@Test func aCorruptEnvelopeIsPurgedAndThePasswordRequired() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    var bytes = try #require(harness.keyStore.storedEnvelope)
    bytes[bytes.count - 1] ^= 1
    harness.keyStore.replaceEnvelope(with: bytes)
    harness.authenticator.enqueue(.init(.success))
    let result = await harness.controller.foreground()
    #expect(result.state == .requirePassword)
    #expect(result.sessionSecret == nil)
    #expect(result.errorCodes == [.unavailable])
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "BIOMETRIC_DISABLED", attributes: ["reason": "ARTEFACTS_UNREADABLE"]),
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "ARTEFACTS_UNREADABLE"]),
        ]
    )
    #expect(harness.keyStore.storedKey == nil)
}

@Test func aRebootRequiresThePassword() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.signals.simulateReboot()
    let result = await harness.controller.foreground()
    #expect(result.passwordReason == .deviceBoot)
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "DEVICE_BOOT"])
        ]
    )
    #expect(await harness.submit().isUnlocked)
    _ = await harness.controller.lock()
    harness.authenticator.enqueue(.init(.success))
    #expect(await harness.controller.foreground().isUnlocked, "the new boot session is recorded at the unlock")
}

@Test func moreThanThirtyMinutesAfterThePasswordRequiresItAgain() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.clock.advance(by: .seconds(30 * 60 + 1))
    let result = await harness.controller.foreground()
    #expect(result.passwordReason == .timeoutExceeded)
}

@Test func aWallClockSetBackOrJumpingAheadFailsSafeWithERR107070() async throws {
    for jump in [Duration.seconds(-3600), .seconds(3600)] {
        let harness = Harness()
        try await harness.enrolledAndLocked()
        harness.clock.setWallTime(harness.clock.currentTime.adding(jump))
        let result = await harness.controller.foreground()
        #expect(result.passwordReason == .clockInconsistent)
        #expect(result.errorCodes == [.inconsistentClock])
        #expect(harness.authenticator.prompts.isEmpty)
    }
}

@Test func aRecentPasswordChangeRequiresThePassword() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.clock.advance(by: .seconds(60))
    harness.verifier.changePassword(to: Fixture.password, at: harness.clock.currentTime)
    let result = await harness.controller.foreground()
    #expect(result.passwordReason == .passwordChanged)
}

@Test func anUnreadableRecordForcesThePasswordAndResetsTheCounter() async throws {
    let keyStore = InMemorySecureKeyStore()
    let first = Harness(keyStore: keyStore)
    try await first.enrolledAndLocked()
    keyStore.recordUnreadable = true
    let relaunched = Harness(keyStore: keyStore)
    let result = await relaunched.controller.start()
    #expect(result.passwordReason == .counterInconsistent)
    #expect(result.errorCodes == [.inconsistentCounter])
    #expect(keyStore.storedRecord?.failedBiometricAttempts == 0)
    #expect(!keyStore.recordUnreadable, "the reset record was written back")
}

@Test func aPromptAnsweredAfterTheAppLockedReleasesNothing() async throws {
    let authenticator = HookedAuthenticator(result: .success)
    let harness = Harness(authenticator: authenticator)
    try await harness.enrolledAndLocked()
    let controller = harness.controller
    authenticator.setHook { _ = await controller.background() }
    let result = await harness.controller.foreground()
    #expect(result.state == .locked)
    #expect(result.sessionSecret == nil)
    #expect(!result.emittedEvents.contains { $0.type == "BIOMETRIC_AUTH_SUCCESS" })
}

@Test func everyEventOfTheseScenariosPassesTheCatalogueAndHasAUniqueKey() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.authenticator.enqueue(.init(.failed), .init(.cancelled))
    _ = await harness.controller.foreground()
    _ = await harness.controller.retryBiometric()
    _ = await harness.submit()
    harness.keyStore.simulateBiometricSetChange()
    _ = await harness.controller.biometricSetDidChange()
    _ = await harness.controller.disableBiometrics()
    let events = harness.sink.events
    #expect(events.count >= 7)
    #expect(catalogueFailures(events).isEmpty)
    #expect(Set(events.map(\.idempotencyKey)).count == events.count)
    #expect(events.allSatisfy { $0.userId == Fixture.userId && $0.deviceId == Fixture.deviceId })
}
