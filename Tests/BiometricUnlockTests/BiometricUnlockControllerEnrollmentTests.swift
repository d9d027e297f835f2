import AuditChain
import Testing

@testable import BiometricUnlock
import UnlockSimulation
import TestKit

@Test func enablingStoresKBioAndAnEnvelopeThatOpensToTheSessionSecret() async throws {
    let harness = Harness()
    _ = await harness.controller.start()
    _ = await harness.submit()
    harness.clock.advance(by: .seconds(10))
    let result = try await harness.enable()
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(
                type: "PASSWORD_AUTH_SUCCESS",
                attributes: ["attemptCount": 1, "reason": "BIOMETRIC_ENROLLMENT"]
            ),
            EventSummary(type: "BIOMETRIC_ENABLED", attributes: ["biometryType": "faceID"]),
        ]
    )
    #expect(result.emittedEvents.allSatisfy { $0.occurredAt == startTime.adding(.seconds(10)) })
    #expect(result.deliveredEvents == result.emittedEvents)
    let key = try #require(harness.keyStore.storedKey)
    #expect(key.count == 32)
    #expect(key != Fixture.sessionProof)
    let envelope = try BiometricEnvelope(serialized: try #require(harness.keyStore.storedEnvelope))
    let associatedData = BiometricEnvelope.associatedData(userId: Fixture.userId, deviceId: Fixture.deviceId)
    #expect(try envelope.open(key: key, associatedData: associatedData) == Fixture.sessionSecret)
    #expect(!envelope.ciphertext.elementsEqual(Fixture.sessionSecret))
    #expect(harness.keyStore.storedRecord?.lastStrongAuthenticationAt == startTime.adding(.seconds(10)))
}

@Test func theSaltAndNonceComeFromTheInjectedGenerator() async throws {
    var envelopes: [[UInt8]] = []
    for seed: UInt64 in [1, 1, 2] {
        let harness = Harness(seed: seed)
        try await harness.enrolledAndLocked()
        envelopes.append(try #require(harness.keyStore.storedEnvelope))
    }
    #expect(envelopes[0] == envelopes[1])
    #expect(envelopes[0] != envelopes[2])
}

@Test func enablingIsRefusedWhenLockedUnavailableOrWithAWrongPassword() async throws {
    let harness = Harness()
    _ = await harness.controller.start()
    var password = Fixture.password
    let locked = await #expect(throws: BiometricUnlockError.self) {
        try await harness.controller.enableBiometrics(password: &password)
    }
    #expect(locked?.code == .unavailable)
    #expect(password.allSatisfy { $0 == 0 })
    _ = await harness.submit()
    var wrong = Fixture.wrongPassword
    let bad = await #expect(throws: BiometricUnlockError.self) {
        try await harness.controller.enableBiometrics(password: &wrong)
    }
    #expect(bad?.code == .badPassword)
    harness.authenticator.setAvailability(.unavailable)
    let unavailable = await #expect(throws: BiometricUnlockError.self) { try await harness.enable() }
    #expect(unavailable?.code == .unavailable)
    #expect(harness.keyStore.storedKey == nil)
    #expect(harness.keyStore.storedEnvelope == nil)
    #expect(
        summaries(harness.sink.events) == [
            EventSummary(type: "PASSWORD_AUTH_FALLBACK", attributes: ["reason": "FIRST_UNLOCK"]),
            EventSummary(type: "PASSWORD_AUTH_SUCCESS", attributes: ["attemptCount": 1, "reason": "FIRST_UNLOCK"]),
            EventSummary(
                type: "PASSWORD_AUTH_FAILURE",
                attributes: ["attemptCount": 1, "reason": "BIOMETRIC_ENROLLMENT", "errorCode": "ERR-107-010"]
            ),
        ],
        "the wrong password given to enable is logged; nothing is enabled"
    )
}

@Test func keyStoreWritesAreRetriedThreeTimes() async throws {
    let harness = Harness()
    _ = await harness.controller.start()
    _ = await harness.submit()
    harness.clock.advance(by: .seconds(1))
    let before = harness.keyStore.writeAttempts
    harness.keyStore.failingWrites = 3
    try await harness.enable()
    #expect(harness.keyStore.storedKey != nil)
    #expect(harness.keyStore.writeAttempts - before == 4 + 1 + 1, "key: 3 refused + 1, envelope 1, record 1")
}

@Test func aKeyStoreThatKeepsRefusingFailsWithERR107020AndLeavesNoArtefact() async throws {
    let harness = Harness()
    _ = await harness.controller.start()
    _ = await harness.submit()
    let before = harness.keyStore.writeAttempts
    harness.keyStore.failingWrites = 4
    let error = await #expect(throws: BiometricUnlockError.self) { try await harness.enable() }
    #expect(error?.code == .keyStoreWriteFailed)
    #expect(error?.message.contains("4 times") == true)
    #expect(harness.keyStore.writeAttempts - before == 4)
    #expect(harness.keyStore.storedKey == nil && harness.keyStore.storedEnvelope == nil)
    #expect(await harness.controller.state == .unlocked)
}

@Test func reEnablingAfterRevocationUsesANewKeyThatTheOldEnvelopeDoesNotOpenWith() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    let oldEnvelope = try BiometricEnvelope(serialized: try #require(harness.keyStore.storedEnvelope))
    let oldKey = try #require(harness.keyStore.storedKey)
    harness.keyStore.simulateBiometricSetChange()
    _ = await harness.controller.foreground()
    _ = await harness.submit()
    try await harness.enable()
    let newKey = try #require(harness.keyStore.storedKey)
    #expect(newKey != oldKey)
    let associatedData = BiometricEnvelope.associatedData(userId: Fixture.userId, deviceId: Fixture.deviceId)
    #expect(throws: BiometricUnlockError.self) { try oldEnvelope.open(key: newKey, associatedData: associatedData) }
}

@Test func disablingRemovesEveryArtefactAndLogsTheReason() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    let result = await harness.controller.disableBiometrics()
    #expect(
        summaries(result.emittedEvents) == [
            EventSummary(type: "BIOMETRIC_DISABLED", attributes: ["reason": "USER_REQUEST"])
        ]
    )
    #expect(harness.keyStore.storedKey == nil && harness.keyStore.storedEnvelope == nil)
    let next = await harness.controller.foreground()
    #expect(next.passwordReason == .firstUnlock)
}
