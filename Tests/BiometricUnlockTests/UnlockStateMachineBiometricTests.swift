import AuditChain
import Testing

@testable import BiometricUnlock

@Test func startupCheckPromptsWhenThePolicyAllowsABiometric() {
    var machine = machine(in: .startupCheck)
    let decision = machine.handle(.observed(observation()))
    #expect(machine.state == .promptBiometric)
    #expect(decision.transitions == [UnlockTransition(from: .startupCheck, to: .promptBiometric)])
    #expect(decision.actions == [.promptBiometric])
}

/// An observation and record that make the policy require the password for `reason`.
private func setUp(_ reason: PasswordReason) -> (UnlockRecord, UnlockObservation) {
    var record = enabledRecord
    var seen = observation()
    switch reason {
    case .deviceBoot: seen.bootSessionID = "boot-2"
    case .clockInconsistent: seen.now = startTime.adding(.seconds(-3600))
    case .passwordChanged: seen.passwordChangedAt = startTime.adding(.seconds(-1))
    case .counterInconsistent: record.failedBiometricAttempts = nil
    case .lockout: record.failedBiometricAttempts = 3
    case .timeoutExceeded: seen.now = startTime.adding(.seconds(31 * 60))
    case .firstUnlock: seen.keyStatus = .notEnrolled
    default: Issue.record("no set-up for \(reason)")
    }
    return (record, seen)
}

@Test(arguments: PasswordReason.policyOrder.filter { $0 != .biometricRevoked })
func startupCheckRequiresThePasswordWhenThePolicySaysSo(reason: PasswordReason) {
    let (record, seen) = setUp(reason)
    var machine = UnlockStateMachine(record: record)
    let decision = machine.handle(.observed(seen))
    #expect(machine.state == .requirePassword)
    #expect(machine.passwordReason == reason)
    #expect(decision.transitions == [UnlockTransition(from: .startupCheck, to: .requirePassword)])
    #expect(
        withoutReports(decision.actions) == [.emit(.passwordAuthFallback(reason: reason)), .requestPassword(reason)]
    )
    #expect(reportedCodes(decision) == [reason.errorCode].compactMap { $0 })
}

@Test func anInconsistentCounterIsResetWhileThePasswordIsForced() {
    var record = enabledRecord
    record.failedBiometricAttempts = -4
    var machine = UnlockStateMachine(record: record)
    let decision = machine.handle(.observed(observation(boot: "boot-2")))
    #expect(machine.passwordReason == .deviceBoot, "a higher reason wins")
    #expect(machine.record.failedBiometricAttempts == 0)
    #expect(reportedCodes(decision) == [.inconsistentCounter], "the reset is still reported")
}

@Test func startupCheckRevokesWhenKBioWasInvalidated() {
    var machine = machine(in: .startupCheck)
    let decision = machine.handle(.observed(observation(keyStatus: .invalidatedByBiometricChange)))
    #expect(machine.state == .revoked)
    #expect(machine.passwordReason == .biometricRevoked)
    #expect(decision.transitions == [UnlockTransition(from: .startupCheck, to: .revoked)])
    #expect(
        withoutReports(decision.actions) == [
            .purgeArtefacts, .emit(.biometricRevokedSystemChange),
            .emit(.passwordAuthFallback(reason: .biometricRevoked)),
            .requestPassword(.biometricRevoked),
        ]
    )
    #expect(reportedCodes(decision) == [.biometricSetChanged])
}

@Test func aRevocationAfterARebootLogsTheRebootAsTheFallbackReason() {
    var machine = machine(in: .startupCheck)
    let decision = machine.handle(.observed(observation(boot: "boot-9", keyStatus: .invalidatedByBiometricChange)))
    #expect(machine.state == .revoked)
    #expect(decision.events == [.biometricRevokedSystemChange, .passwordAuthFallback(reason: .deviceBoot)])
    #expect(reportedCodes(decision) == [.biometricSetChanged])
}

@Test func aSuccessfulBiometricThatOpenedTheEnvelopeUnlocks() {
    var machine = machine(
        in: .promptBiometric,
        record: UnlockRecord(
            lastStrongAuthenticationAt: startTime.adding(.seconds(-60)),
            failedBiometricAttempts: 2,
            bootSessionAtLastUnlock: "boot-1"
        )
    )
    let decision = machine.handle(.biometricCompleted(.unlocked(duration: .milliseconds(1234))))
    #expect(machine.state == .unlocked)
    #expect(decision.transitions == [UnlockTransition(from: .promptBiometric, to: .unlocked)])
    #expect(decision.actions == [.emit(.biometricAuthSuccess(unlockDurationMs: 1234))])
    #expect(machine.record.failedBiometricAttempts == 0)
}

@Test func aBiometricFailureGoesToBiometricFailedAndCounts() {
    var machine = machine(in: .promptBiometric)
    let decision = machine.handle(.biometricCompleted(.recognitionFailed))
    #expect(machine.state == .biometricFailed)
    #expect(decision.transitions == [UnlockTransition(from: .promptBiometric, to: .biometricFailed)])
    #expect(decision.events == [.biometricAuthFailure(attemptCount: 1, errorCode: .recognitionFailed)])
    #expect(reportedCodes(decision) == [.recognitionFailed])
    #expect(machine.record.failedBiometricAttempts == 1)
}

@Test func biometricFailedRetriesWhileAttemptsRemain() {
    var machine = machine(in: .biometricFailed)
    let decision = machine.handle(.retryBiometric)
    #expect(machine.state == .promptBiometric)
    #expect(decision.transitions == [UnlockTransition(from: .biometricFailed, to: .promptBiometric)])
    #expect(decision.actions == [.promptBiometric])
}

@Test func theThirdFailureGoesThroughBiometricFailedToRequirePassword() {
    var machine = machine(in: .promptBiometric)
    _ = machine.handle(.biometricCompleted(.recognitionFailed))
    _ = machine.handle(.retryBiometric)
    _ = machine.handle(.biometricCompleted(.recognitionFailed))
    _ = machine.handle(.retryBiometric)
    let decision = machine.handle(.biometricCompleted(.recognitionFailed))
    #expect(machine.state == .requirePassword)
    #expect(machine.passwordReason == .lockout)
    #expect(
        decision.transitions == [
            UnlockTransition(from: .promptBiometric, to: .biometricFailed),
            UnlockTransition(from: .biometricFailed, to: .requirePassword),
        ]
    )
    #expect(
        decision.events == [
            .biometricAuthFailure(attemptCount: 3, errorCode: .recognitionFailed),
            .passwordAuthFallback(reason: .lockout),
        ]
    )
    #expect(machine.handle(.retryBiometric).inputAccepted == false, "no retry after lockout")
}

@Test(arguments: [
    (BiometricAttemptOutcome.cancelled, PasswordReason.promptCancelled, BiometricUnlockError.Code.promptCancelled),
    (.unavailable, .biometricUnavailable, .unavailable),
])
func aCancelledOrUnavailablePromptOffersThePasswordAtOnce(
    outcome: BiometricAttemptOutcome,
    reason: PasswordReason,
    code: BiometricUnlockError.Code
) {
    var machine = machine(in: .promptBiometric)
    let decision = machine.handle(.biometricCompleted(outcome))
    #expect(machine.state == .requirePassword)
    #expect(decision.transitions == [UnlockTransition(from: .promptBiometric, to: .requirePassword)])
    #expect(
        withoutReports(decision.actions) == [.emit(.passwordAuthFallback(reason: reason)), .requestPassword(reason)]
    )
    #expect(reportedCodes(decision) == [code])
    #expect(machine.record.failedBiometricAttempts == 0, "not a failed attempt")
}

@Test func anInvalidatedKeyAtThePromptRevokes() {
    var machine = machine(in: .promptBiometric)
    let decision = machine.handle(.biometricCompleted(.keyInvalidated))
    #expect(machine.state == .revoked)
    #expect(decision.transitions == [UnlockTransition(from: .promptBiometric, to: .revoked)])
    #expect(decision.actions.first == .purgeArtefacts)
    #expect(decision.events == [.biometricRevokedSystemChange, .passwordAuthFallback(reason: .biometricRevoked)])
}

@Test func unreadableArtefactsArePurgedAndThePasswordRequired() {
    var machine = machine(in: .promptBiometric)
    let decision = machine.handle(.biometricCompleted(.artefactsUnreadable))
    #expect(machine.state == .requirePassword)
    #expect(
        withoutReports(decision.actions) == [
            .purgeArtefacts, .emit(.biometricDisabled(reason: .artefactsUnreadable)),
            .emit(.passwordAuthFallback(reason: .artefactsUnreadable)), .requestPassword(.artefactsUnreadable),
        ]
    )
    #expect(reportedCodes(decision) == [.unavailable])
}
