import AuditChain
import Synchronization
import Testing

@testable import BiometricUnlock
import UnlockSimulation
import TestKit

/// Runs a biometric unlock from `LOCKED` with the sink up or down; returns the result.
private func biometricUnlock(sinkAvailable: Bool) async throws -> (Harness, UnlockStepResult) {
    let harness = Harness()
    try await harness.enrolledAndLocked()
    harness.sink.isAvailable = sinkAvailable
    harness.authenticator.enqueue(.init(.success, takes: .milliseconds(300)))
    return (harness, await harness.controller.foreground())
}

@Test func aFailingSinkDoesNotChangeTheUnlockOutcome() async throws {
    let (_, up) = try await biometricUnlock(sinkAvailable: true)
    let (_, down) = try await biometricUnlock(sinkAvailable: false)
    #expect(down.state == up.state)
    #expect(down.transitions == up.transitions)
    #expect(down.sessionSecret == up.sessionSecret)
    #expect(down.sessionSecret?.bytes == Fixture.sessionSecret)
    #expect(down.emittedEvents == up.emittedEvents)
    #expect(up.auditFailure == nil)
}

@Test func aFailingSinkIsReportedWithERR107090AndTheEventKept() async throws {
    let (harness, result) = try await biometricUnlock(sinkAvailable: false)
    let failure = try #require(result.auditFailure)
    #expect(failure.code == .auditUnavailable)
    #expect(failure.message.contains("BIOMETRIC_AUTH_SUCCESS"))
    #expect(failure.message.contains("offered again"))
    #expect(result.deliveredEvents.isEmpty)
    #expect(result.pendingEventCount == 1)
    #expect(await harness.controller.pendingEvents == result.emittedEvents)
    #expect(!harness.sink.events.contains(result.emittedEvents[0]))
}

@Test func theKeptEventIsOfferedAgainOnTheNextStepBeforeTheNewOnes() async throws {
    let (harness, unlocked) = try await biometricUnlock(sinkAvailable: false)
    let kept = try #require(unlocked.emittedEvents.first)
    harness.sink.isAvailable = true
    harness.keyStore.simulateBiometricSetChange()
    let next = await harness.controller.biometricSetDidChange()
    #expect(next.auditFailure == nil)
    #expect(next.deliveredEvents.first == kept, "same event, same idempotency key, first")
    #expect(
        next.deliveredEvents.dropFirst().map(\.type) == ["BIOMETRIC_REVOKED_SYSTEM_CHANGE", "PASSWORD_AUTH_FALLBACK"]
    )
    #expect(next.pendingEventCount == 0)
    #expect(Array(harness.sink.events.suffix(3)) == next.deliveredEvents)
}

@Test func anIgnoredStepStillRetriesTheSink() async throws {
    let (harness, _) = try await biometricUnlock(sinkAvailable: false)
    harness.sink.isAvailable = true
    let ignored = await harness.controller.retryBiometric()
    #expect(!ignored.inputAccepted)
    #expect(ignored.deliveredEvents.map(\.type) == ["BIOMETRIC_AUTH_SUCCESS"])
    #expect(ignored.state == .unlocked)
}

@Test func flushingOffersThePendingEventsWithoutChangingTheState() async throws {
    let (harness, _) = try await biometricUnlock(sinkAvailable: false)
    let stillDown = await harness.controller.flushAuditEvents()
    #expect(stillDown.auditFailure != nil)
    #expect(stillDown.pendingEventCount == 1)
    harness.sink.isAvailable = true
    let flushed = await harness.controller.flushAuditEvents()
    #expect(flushed.state == .unlocked && flushed.transitions.isEmpty)
    #expect(flushed.deliveredEvents.count == 1)
    #expect(flushed.pendingEventCount == 0)
    #expect(flushed.errors.isEmpty)
}

@Test func anOverflowingBufferDropsTheOldestAndReportsIt() async throws {
    let harness = Harness { $0.pendingEventCapacity = 2 }
    harness.sink.isAvailable = false
    let first = await harness.controller.start()
    #expect(first.emittedEvents.map(\.reason) == ["FIRST_UNLOCK"])
    let unlocked = await harness.submit()
    #expect(unlocked.emittedEvents.map(\.type) == ["PASSWORD_AUTH_SUCCESS"])
    _ = await harness.controller.lock()
    let second = await harness.controller.foreground()
    #expect(second.droppedEvents == first.emittedEvents)
    _ = await harness.controller.lock()
    let third = await harness.controller.foreground()
    #expect(third.droppedEvents == unlocked.emittedEvents)
    #expect(third.auditFailure != nil)
    #expect(third.errors.contains { $0.code == .auditUnavailable && $0.message.contains("dropped") })
    #expect(third.pendingEventCount == 2)
    harness.sink.isAvailable = true
    let flushed = await harness.controller.flushAuditEvents()
    #expect(flushed.deliveredEvents == second.emittedEvents + third.emittedEvents)
}

@Test func anEventTheCatalogueRefusesIsReportedNotQueuedAndTheUnlockStillWorks() async {
    let harness = Harness { $0.userId = "" }
    let started = await harness.controller.start()
    #expect(started.state == .requirePassword)
    #expect(started.auditFailure?.message.contains("catalogue refuses") == true)
    #expect(started.pendingEventCount == 0)
    #expect(harness.sink.attempts == 0)
    #expect(await harness.submit().isUnlocked)
}

extension AuditEvent {
    /// The `reason` attribute, for short comparisons.
    fileprivate var reason: String? { attributes["reason"]?.stringValue }
}

/// A sink that runs a hook before taking each event.
private final class HookedSink: AuditSink, Sendable {
    let inner = InMemoryAuditSink()
    private let hook = Mutex<(@Sendable () async -> Void)?>(nil)

    func setHook(_ action: (@Sendable () async -> Void)?) {
        hook.withLock { $0 = action }
    }

    func record(_ event: AuditEvent) async throws {
        let action = hook.withLock { $0 }
        await action?()
        try await inner.record(event)
    }
}

@Test func aSecretIsNotReturnedWhenTheAppLockedWhileTheEventWasDelivered() async throws {
    let sink = HookedSink()
    let clock = ManualClock(wallTime: startTime)
    let authenticator = ScriptedBiometricAuthenticator(clock: clock)
    let keyStore = InMemorySecureKeyStore()
    let controller = BiometricUnlockController(
        configuration: BiometricUnlockConfiguration(userId: Fixture.userId, deviceId: Fixture.deviceId),
        platform: UnlockPlatform(
            authenticator: authenticator,
            keyStore: keyStore,
            passwordVerifier: InMemoryPasswordVerifier(
                password: Fixture.password,
                sessionProof: Fixture.sessionProof,
                sessionSecret: Fixture.sessionSecret
            ),
            wallClock: clock,
            auditSink: sink,
            deviceSignals: ManualDeviceSignals()
        ),
        clock: clock,
        random: SplitMix64(seed: 3)
    )
    _ = await controller.start()
    var password = Fixture.password
    _ = await controller.submitPassword(&password)
    password = Fixture.password
    _ = try await controller.enableBiometrics(password: &password)
    _ = await controller.lock()
    sink.setHook { _ = await controller.background() }
    authenticator.enqueue(.init(.success))
    let result = await controller.foreground()
    #expect(result.transitions.last == UnlockTransition(from: .promptBiometric, to: .unlocked))
    #expect(result.state == .locked)
    #expect(result.sessionSecret == nil)
    sink.setHook(nil)
    #expect(sink.inner.events.last?.type == "BIOMETRIC_AUTH_SUCCESS")
}
