import AuditChain
import Testing

@testable import BiometricUnlock
import UnlockSimulation
import TestKit

extension SplitMix64 {
    /// A number in 0..<bound.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    /// True with probability 1/`odds`.
    mutating func oneIn(_ odds: Int) -> Bool { below(odds) == 0 }
}

/// A random input of any kind, with random payloads.
private func randomInput(_ random: inout SplitMix64, now: AuditTimestamp) -> UnlockInput {
    let statuses: [BiometricKeyStatus] = [.notEnrolled, .enrolled, .enrolled, .invalidatedByBiometricChange]
    let outcomes: [BiometricAttemptOutcome] = [
        .unlocked(duration: .milliseconds(random.below(5000))), .recognitionFailed, .recognitionFailed, .cancelled,
        .unavailable, .keyInvalidated, .artefactsUnreadable,
    ]
    switch random.below(15) {
    case 0: return .launched
    case 1, 2:
        return .observed(
            UnlockObservation(
                now: now.adding(.seconds(random.below(7200) - 600)),
                bootSessionID: "boot-\(random.below(2))",
                passwordChangedAt: random.oneIn(4) ? now.adding(.seconds(-random.below(100_000))) : nil,
                monotonicElapsedSinceStrongAuthentication: random.oneIn(2) ? .seconds(random.below(4000)) : nil,
                keyStatus: statuses[random.below(statuses.count)]
            )
        )
    case 3, 4: return .biometricCompleted(outcomes[random.below(outcomes.count)])
    case 5: return .retryBiometric
    case 6: return .usePassword
    case 7: return .passwordAccepted(at: now, bootSessionID: "boot-\(random.below(2))")
    case 8: return random.oneIn(2) ? .passwordRejected(at: now) : .passwordRefused(at: now, retryAfterMs: 1000)
    case 9: return [.background, .lock, .timeout][random.below(3)]
    case 10: return .foreground
    case 11: return .biometricSetChanged
    case 12: return .biometricEnabled(biometryType: ["faceID", "touchID", ""][random.below(3)], at: now)
    case 13: return .biometricDisabled(DisableReason.allCases[random.below(DisableReason.allCases.count)])
    default:
        return .observed(UnlockObservation(now: now, bootSessionID: "boot-0", keyStatus: .enrolled))
    }
}

@Test(arguments: [UInt64(1), 2, 3, 42, 2024])
func randomInputsNeverUnlockWithoutASuccessfulStepNorEmitAnInvalidEvent(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    var unlocks = 0
    for sequence in 0..<60 {
        var machine = UnlockStateMachine(
            record: random.oneIn(5)
                ? .unreadable
                : UnlockRecord(
                    lastStrongAuthenticationAt: random.oneIn(4) ? nil : startTime.adding(.seconds(-60)),
                    failedBiometricAttempts: random.below(4),
                    bootSessionAtLastUnlock: random.oneIn(3) ? nil : "boot-0"
                )
        )
        var now = startTime
        for step in 0..<80 {
            now = now.adding(.seconds(random.below(120)))
            let input = randomInput(&random, now: now)
            let before = machine.state
            let decision = machine.handle(input)
            let context = "seed \(seed) sequence \(sequence) step \(step): \(input) in \(before)"
            if machine.state == .unlocked, before != .unlocked {
                unlocks += 1
                switch input {
                case .biometricCompleted(.unlocked): #expect(before == .promptBiometric, "\(context)")
                case .passwordAccepted: #expect(before.acceptsPassword, "\(context)")
                default: Issue.record("unlocked without a successful step: \(context)")
                }
            }
            if machine.state == .promptBiometric, before != .promptBiometric, case .observed(let seen) = input {
                #expect(machine.policy.evaluate(machine.context(for: seen)) == .biometricAllowed, "\(context)")
            }
            #expect(machine.state.acceptsPassword == (machine.passwordReason != nil), "\(context)")
            #expect(decision.inputAccepted || (decision.actions.isEmpty && machine.state == before), "\(context)")
            let events = decision.events.map {
                $0.auditEvent(occurredAt: now, userId: "user", deviceId: "device", idempotencyKey: "k-\(step)")
            }
            let failures = catalogueFailures(events)
            #expect(failures.isEmpty, "\(context): \(failures)")
            if failures.isEmpty == false { return }
        }
    }
    #expect(unlocks > 10, "the random inputs reach UNLOCKED")
}

/// What the simulated user or platform does next.
private enum Operation {
    case foreground, background, lock, timeout, retry, usePassword, rightPassword, wrongPassword, enable, disable
    case biometricSetChange, reboot, passTime, sinkDown, sinkUp, changePassword, startAgain

    /// The operations, the common ones repeated so that sessions often reach a biometric prompt.
    static let weighted: [Operation] = [
        .foreground, .foreground, .foreground, .foreground, .background, .lock, .lock, .timeout, .retry, .retry,
        .usePassword, .rightPassword, .rightPassword, .wrongPassword, .enable, .enable, .disable, .biometricSetChange,
        .reboot, .passTime, .passTime, .sinkDown, .sinkUp, .sinkUp, .changePassword, .startAgain,
    ]

    /// What a user in `state` most plausibly does next (so that sessions go deep, not only wander).
    static func likely(in state: UnlockState, _ random: inout SplitMix64) -> Operation {
        switch state {
        case .startupCheck, .locked: .foreground
        case .promptBiometric, .biometricFailed: .retry
        case .requirePassword, .revoked: .rightPassword
        case .unlocked: random.oneIn(2) ? .enable : .lock
        }
    }
}

@Test(arguments: [UInt64(7), 99, 31_337])
func randomSessionsThroughTheShellOnlyUnlockWithAPasswordOrAMatchingBiometric(seed: UInt64) async throws {
    var random = SplitMix64(seed: seed)
    let results: [BiometricPromptResult] = [.success, .success, .success, .failed, .failed, .cancelled, .unavailable]
    var unlocks = (byPassword: 0, byBiometric: 0)
    for _ in 0..<8 {
        let harness = Harness(seed: random.next()) { $0.pendingEventCapacity = 8 }
        var emitted: [AuditEvent] = []
        var dropped: [AuditEvent] = []
        let first = await harness.controller.start()
        emitted += first.emittedEvents
        for step in 0..<100 {
            let response = results[random.below(results.count)]
            harness.authenticator.setScript([.init(response, takes: .milliseconds(random.below(3000)))])
            let scriptBefore = harness.authenticator.remainingScript.count
            let stateBefore = await harness.controller.state
            let operation =
                random.oneIn(2)
                ? Operation.likely(in: stateBefore, &random)
                : Operation.weighted[random.below(Operation.weighted.count)]
            var result: UnlockStepResult?
            switch operation {
            case .foreground: result = await harness.controller.foreground()
            case .background: result = await harness.controller.background()
            case .lock: result = await harness.controller.lock()
            case .timeout: result = await harness.controller.timeout()
            case .retry: result = await harness.controller.retryBiometric()
            case .usePassword: result = await harness.controller.usePassword()
            case .rightPassword: result = await harness.submit()
            case .wrongPassword: result = await harness.submit(Fixture.wrongPassword)
            case .enable: result = try? await harness.enable()
            case .disable: result = await harness.controller.disableBiometrics()
            case .biometricSetChange:
                harness.keyStore.simulateBiometricSetChange()
                result = await harness.controller.biometricSetDidChange()
            case .reboot: harness.signals.simulateReboot()
            case .passTime: harness.clock.advance(by: .seconds(random.below(random.oneIn(4) ? 3600 : 300)))
            case .sinkDown: harness.sink.isAvailable = false
            case .sinkUp: harness.sink.isAvailable = true
            case .changePassword: harness.verifier.changePassword(to: Fixture.password, at: harness.clock.currentTime)
            case .startAgain: result = await harness.controller.start()
            }
            let consumed = harness.authenticator.remainingScript.count < scriptBefore
            guard let result else { continue }
            emitted += result.emittedEvents
            dropped += result.droppedEvents
            let context =
                "seed \(seed) step \(step): \(operation) from \(stateBefore), prompt \(consumed ? "\(response)" : "-")"
            if result.transitions.contains(where: { $0.to == .unlocked }) {
                let byPassword = operation == .rightPassword
                let byBiometric = consumed && response == .success
                #expect(byPassword || byBiometric, "unlocked without a successful step: \(context)")
                if byPassword { unlocks.byPassword += 1 } else { unlocks.byBiometric += 1 }
                #expect(result.sessionSecret?.bytes == Fixture.sessionSecret, "\(context)")
            } else {
                #expect(result.sessionSecret == nil, "\(context)")
            }
            #expect(catalogueFailures(result.emittedEvents).isEmpty, "\(context)")
        }
        harness.sink.isAvailable = true
        let flushed = await harness.controller.flushAuditEvents()
        #expect(flushed.pendingEventCount == 0)
        let keys = harness.sink.events.map(\.idempotencyKey)
        #expect(Set(keys).count == keys.count, "no event is recorded twice")
        let lost = Set(dropped.map(\.idempotencyKey))
        #expect(keys == emitted.map(\.idempotencyKey).filter { !lost.contains($0) }, "in order, none silently lost")
    }
    #expect(unlocks.byPassword > 0 && unlocks.byBiometric > 0, "the sessions unlock both ways: \(unlocks)")
}
