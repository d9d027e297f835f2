import AuditChain
import Synchronization
import Testing

@testable import BiometricUnlock
import UnlockSimulation
import TestKit

/// Submits `count` wrong passwords; returns the results.
private func wrongPasswords(_ harness: Harness, _ count: Int) async -> [UnlockStepResult] {
    var results: [UnlockStepResult] = []
    for _ in 0..<count { results.append(await harness.submit(Fixture.wrongPassword)) }
    return results
}

/// A `PASSWORD_AUTH_FAILURE` summary.
private func failure(
    _ attempt: Int64,
    _ code: String,
    reason: String = "FIRST_UNLOCK",
    retryAfterMs: Int64? = nil
)
    -> EventSummary
{
    var attributes: [String: JSONValue] = ["attemptCount": .integer(attempt), "reason": .string(reason)]
    attributes["errorCode"] = .string(code)
    if let retryAfterMs { attributes["retryAfterMs"] = .integer(retryAfterMs) }
    return EventSummary(type: "PASSWORD_AUTH_FAILURE", attributes: attributes)
}

@Test func everyPasswordAttemptIsLoggedWithItsCountAndTheReasonThePasswordWasRequired() async throws {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.signals.simulateReboot()
    _ = await harness.controller.foreground()
    let wrong = await wrongPasswords(harness, 2)
    #expect(wrong.allSatisfy { $0.errorCodes == [.badPassword] && $0.state == .requirePassword })
    let right = await harness.submit()
    #expect(right.isUnlocked)
    #expect(
        summaries(wrong.flatMap(\.emittedEvents) + right.emittedEvents) == [
            failure(1, "ERR-107-010", reason: "DEVICE_BOOT"),
            failure(2, "ERR-107-010", reason: "DEVICE_BOOT"),
            EventSummary(type: "PASSWORD_AUTH_SUCCESS", attributes: ["attemptCount": 3, "reason": "DEVICE_BOOT"]),
        ]
    )
    #expect(harness.keyStore.storedRecord?.passwordThrottle == AttemptThrottle(), "a success resets the count")
    let password = String(decoding: Fixture.password, as: UTF8.self)
    let wrongPassword = String(decoding: Fixture.wrongPassword, as: UTF8.self)
    for event in harness.sink.events {
        let payload = String(decoding: event.canonicalPayload, as: UTF8.self)
        #expect(!payload.contains(password) && !payload.contains(wrongPassword), "\(event.type)")
    }
    #expect(catalogueFailures(harness.sink.events).isEmpty)
}

@Test func fiveWrongPasswordsThrottleAndTheNextAttemptIsRefusedUnchecked() async throws {
    let harness = Harness()
    _ = await harness.controller.start()
    let wrong = await wrongPasswords(harness, 5)
    #expect(wrong.dropLast().allSatisfy { $0.errorCodes == [.badPassword] })
    #expect(wrong.last?.errorCodes == [.badPassword, .passwordThrottled])
    #expect(
        summaries(wrong.flatMap(\.emittedEvents))
            == (1...5).map { failure($0, "ERR-107-010") } + [
                EventSummary(
                    type: "PASSWORD_ATTEMPTS_THROTTLED",
                    attributes: ["failedAttempts": 5, "lockoutMs": 30_000, "reason": "FIRST_UNLOCK"]
                )
            ]
    )
    #expect(harness.verifier.verifications == 5)
    #expect(
        harness.keyStore.storedRecord?.passwordThrottle
            == AttemptThrottle(
                failedAttempts: 5,
                lockout: AttemptLockout(startedAt: startTime, durationMilliseconds: 30_000)
            )
    )

    harness.clock.advance(by: .seconds(10))
    var password = Fixture.password
    let refused = await harness.controller.submitPassword(&password)
    #expect(harness.verifier.verifications == 5, "the verifier is not called during the lockout")
    #expect(password.allSatisfy { $0 == 0 })
    #expect(refused.state == .requirePassword && refused.sessionSecret == nil)
    #expect(refused.inputAccepted)
    #expect(refused.errorCodes == [.passwordThrottled])
    #expect(refused.errors.first?.message.contains("20 more second") == true, "\(refused.errors)")
    #expect(summaries(refused.emittedEvents) == [failure(6, "ERR-107-011", retryAfterMs: 20_000)])
    #expect(refused.emittedEvents.count == 1, "one event per refused attempt, no new THROTTLED")

    harness.clock.advance(by: .seconds(19))
    #expect(await harness.submit().errorCodes == [.passwordThrottled])
    harness.clock.advance(by: .seconds(1))
    let unlocked = await harness.submit()
    #expect(unlocked.isUnlocked)
    #expect(
        summaries(unlocked.emittedEvents) == [
            EventSummary(type: "PASSWORD_AUTH_SUCCESS", attributes: ["attemptCount": 6, "reason": "FIRST_UNLOCK"])
        ]
    )
    #expect(harness.verifier.verifications == 6)
    #expect(harness.keyStore.storedRecord?.passwordThrottle == AttemptThrottle())
}

@Test func eachWrongPasswordAfterALockoutDoublesIt() async {
    let harness = Harness()
    _ = await harness.controller.start()
    _ = await wrongPasswords(harness, 5)
    var lockouts: [JSONValue?] = []
    for wait in [30, 60, 120] {
        harness.clock.advance(by: .seconds(Int64(wait)))
        let result = await harness.submit(Fixture.wrongPassword)
        lockouts.append(result.emittedEvents.last?.attributes["lockoutMs"])
    }
    #expect(lockouts == [60_000, 120_000, 240_000])
    #expect(harness.verifier.verifications == 8)
}

@Test func theThrottleSurvivesARelaunch() async {
    let keyStore = InMemorySecureKeyStore()
    let clock = ManualClock(wallTime: startTime)
    let first = Harness(keyStore: keyStore, clock: clock)
    _ = await first.controller.start()
    _ = await wrongPasswords(first, 5)
    clock.advance(by: .seconds(5))

    let relaunched = Harness(keyStore: keyStore, clock: clock)
    _ = await relaunched.controller.start()
    let refused = await relaunched.submit()
    #expect(relaunched.verifier.verifications == 0)
    #expect(refused.errorCodes == [.passwordThrottled])
    #expect(summaries(refused.emittedEvents) == [failure(6, "ERR-107-011", retryAfterMs: 25_000)])
    clock.advance(by: .seconds(25))
    #expect(await relaunched.submit().isUnlocked)
}

@Test func settingTheWallClockBackOrAheadDoesNotEndTheLockoutEarly() async {
    let harness = Harness()
    _ = await harness.controller.start()
    _ = await wrongPasswords(harness, 5)

    // Ahead: the monotonic clock of this process still says no time passed.
    harness.clock.setWallTime(startTime.adding(.seconds(7200)))
    #expect(await harness.submit().errorCodes == [.passwordThrottled])

    // Back, a day before the lockout started: the whole lockout remains, counted from the new reading.
    let earlier = startTime.adding(.seconds(-86_400))
    harness.clock.setWallTime(earlier)
    let refused = await harness.submit()
    #expect(summaries(refused.emittedEvents) == [failure(6, "ERR-107-011", retryAfterMs: 30_000)])
    #expect(harness.keyStore.storedRecord?.passwordThrottle.lockout?.startedAt == earlier)
    harness.clock.advance(by: .seconds(29))
    #expect(await harness.submit().errorCodes == [.passwordThrottled])
    harness.clock.advance(by: .seconds(1))
    #expect(await harness.submit().isUnlocked)
    #expect(harness.verifier.verifications == 6)
}

@Test func aWallClockSetBackAcrossARelaunchStillRefuses() async {
    let keyStore = InMemorySecureKeyStore()
    let clock = ManualClock(wallTime: startTime)
    let first = Harness(keyStore: keyStore, clock: clock)
    _ = await first.controller.start()
    _ = await wrongPasswords(first, 5)
    clock.setWallTime(startTime.adding(.seconds(-3600)))
    let relaunched = Harness(keyStore: keyStore, clock: clock)
    _ = await relaunched.controller.start()
    let refused = await relaunched.submit()
    #expect(refused.errorCodes == [.passwordThrottled])
    #expect(relaunched.verifier.verifications == 0)
}

@Test func enablingBiometricsCountsAndIsThrottledLikeTheUnlock() async throws {
    let harness = Harness()
    _ = await harness.controller.start()
    #expect(await harness.submit().isUnlocked)
    for _ in 0..<5 {
        var wrong = Fixture.wrongPassword
        let error = await #expect(throws: BiometricUnlockError.self) {
            try await harness.controller.enableBiometrics(password: &wrong)
        }
        #expect(error?.code == .badPassword)
    }
    let verifications = harness.verifier.verifications
    let refused = await #expect(throws: BiometricUnlockError.self) { try await harness.enable() }
    #expect(refused?.code == .passwordThrottled)
    #expect(harness.verifier.verifications == verifications, "not checked while throttled")
    #expect(harness.keyStore.storedKey == nil)
    let events = Array(harness.sink.events.suffix(7))
    #expect(
        summaries(events)
            == (1...5).map { failure($0, "ERR-107-010", reason: "BIOMETRIC_ENROLLMENT") } + [
                EventSummary(
                    type: "PASSWORD_ATTEMPTS_THROTTLED",
                    attributes: ["failedAttempts": 5, "lockoutMs": 30_000, "reason": "BIOMETRIC_ENROLLMENT"]
                ),
                failure(6, "ERR-107-011", reason: "BIOMETRIC_ENROLLMENT", retryAfterMs: 30_000),
            ]
    )
    #expect(await harness.controller.state == .unlocked, "throttling does not lock an unlocked session")
    harness.clock.advance(by: .seconds(30))
    let enabled = try await harness.enable()
    #expect(enabled.emittedEvents.map(\.type) == ["PASSWORD_AUTH_SUCCESS", "BIOMETRIC_ENABLED"])
    #expect(enabled.emittedEvents.first?.attributes["attemptCount"] == 6)
}

/// A verifier that runs a hook (once) while it checks a password.
private final class HookedVerifier: PasswordVerifier, Sendable {
    let inner = InMemoryPasswordVerifier(
        password: Fixture.password,
        sessionProof: Fixture.sessionProof,
        sessionSecret: Fixture.sessionSecret
    )
    private let hook = Mutex<(@Sendable () async -> Void)?>(nil)

    func setHook(_ action: @escaping @Sendable () async -> Void) {
        hook.withLock { $0 = action }
    }

    func verify(password: [UInt8]) async -> PasswordVerification {
        let action = hook.withLock { hook in
            defer { hook = nil }
            return hook
        }
        await action?()
        return await inner.verify(password: password)
    }

    func passwordChangedAt() async -> AuditTimestamp? { nil }
}

@Test func anAttemptMadeWhileAnotherIsCheckedIsRefusedUnchecked() async {
    let clock = ManualClock(wallTime: startTime)
    let verifier = HookedVerifier()
    let sink = InMemoryAuditSink()
    let controller = BiometricUnlockController(
        configuration: BiometricUnlockConfiguration(userId: Fixture.userId, deviceId: Fixture.deviceId),
        platform: UnlockPlatform(
            authenticator: ScriptedBiometricAuthenticator(clock: clock),
            keyStore: InMemorySecureKeyStore(),
            passwordVerifier: verifier,
            wallClock: clock,
            auditSink: sink,
            deviceSignals: ManualDeviceSignals()
        ),
        clock: clock,
        random: SplitMix64(seed: 1)
    )
    _ = await controller.start()
    let concurrent = Mutex<UnlockStepResult?>(nil)
    verifier.setHook {
        var other = Fixture.password
        let result = await controller.submitPassword(&other)
        concurrent.withLock { $0 = result }
    }
    var password = Fixture.password
    let first = await controller.submitPassword(&password)
    #expect(first.isUnlocked)
    let second: UnlockStepResult? = concurrent.withLock { $0 }
    #expect(second != nil, "the concurrent attempt ran")
    #expect(second?.errorCodes == [.passwordThrottled])
    #expect(second?.sessionSecret == nil)
    #expect(second?.errors.first?.message.contains("being checked") == true)
    #expect(verifier.inner.verifications == 1)
    #expect(
        summaries(sink.events.filter { $0.type.hasPrefix("PASSWORD_AUTH_") && $0.type != "PASSWORD_AUTH_FALLBACK" })
            == [
                failure(1, "ERR-107-011", retryAfterMs: 0),
                EventSummary(type: "PASSWORD_AUTH_SUCCESS", attributes: ["attemptCount": 1, "reason": "FIRST_UNLOCK"]),
            ]
    )
}
