import AuditChain
import Testing

@testable import BiometricUnlock

@Test func launchAsksForAnObservation() {
    var machine = machine(in: .startupCheck)
    let decision = machine.handle(.launched)
    #expect(decision.actions == [.observe])
    #expect(decision.transitions.isEmpty)
    #expect(machine.state == .startupCheck)
}

@Test(arguments: [UnlockState.promptBiometric, .biometricFailed])
func choosingThePasswordLeavesTheBiometric(from state: UnlockState) {
    var machine = machine(in: state)
    let decision = machine.handle(.usePassword)
    #expect(machine.state == .requirePassword)
    #expect(decision.transitions == [UnlockTransition(from: state, to: .requirePassword)])
    #expect(decision.events == [.passwordAuthFallback(reason: .userChosePassword)])
}

@Test(arguments: [UnlockState.requirePassword, .revoked])
func aPasswordSuccessUnlocksAndRecordsTheStrongAuthentication(from state: UnlockState) throws {
    var machine = machine(in: state)
    let time = startTime.adding(.seconds(5))
    let reason = try #require(machine.passwordReason)
    let decision = machine.handle(.passwordAccepted(at: time, bootSessionID: "boot-3"))
    #expect(machine.state == .unlocked)
    #expect(machine.passwordReason == nil)
    #expect(decision.transitions == [UnlockTransition(from: state, to: .unlocked)])
    #expect(decision.actions == [.emit(.passwordAuthSuccess(attemptCount: 1, reason: .required(reason)))])
    #expect(
        machine.record
            == UnlockRecord(
                lastStrongAuthenticationAt: time,
                failedBiometricAttempts: 0,
                bootSessionAtLastUnlock: "boot-3"
            )
    )
}

@Test(arguments: [UnlockState.requirePassword, .revoked])
func aPasswordFailureStaysAndReportsIt(from state: UnlockState) throws {
    var machine = machine(in: state)
    let reason = try #require(machine.passwordReason)
    let decision = machine.handle(.passwordRejected(at: startTime))
    #expect(machine.state == state)
    #expect(machine.passwordReason == reason)
    #expect(decision.transitions.isEmpty)
    #expect(
        decision.events == [.passwordAuthFailure(attemptCount: 1, reason: .required(reason), errorCode: .badPassword)]
    )
    #expect(machine.record.passwordThrottle.failedAttempts == 1)
    #expect(reportedCodes(decision) == [rejected])
}

@Test(arguments: UnlockState.allCases.filter { $0 != .locked }, [UnlockInput.background, .lock, .timeout])
func backgroundLockOrTimeoutLocks(from state: UnlockState, input: UnlockInput) {
    var machine = machine(in: state)
    let decision = machine.handle(input)
    #expect(machine.state == .locked)
    #expect(decision.transitions == [UnlockTransition(from: state, to: .locked)])
    #expect(decision.actions == (state == .unlocked ? [.discardSession] : []))
    #expect(machine.passwordReason == nil)
}

@Test func foregroundReturnsFromLockedToStartupCheck() {
    var machine = machine(in: .locked)
    let decision = machine.handle(.foreground)
    #expect(machine.state == .startupCheck)
    #expect(decision.transitions == [UnlockTransition(from: .locked, to: .startupCheck)])
    #expect(decision.actions == [.observe])
}

@Test(arguments: UnlockState.allCases.filter { $0 != .revoked })
func aBiometricSetChangeRevokes(from state: UnlockState) {
    var machine = machine(in: state)
    let decision = machine.handle(.biometricSetChanged)
    #expect(machine.state == .revoked)
    #expect(machine.passwordReason == .biometricRevoked)
    #expect(decision.transitions == [UnlockTransition(from: state, to: .revoked)])
    #expect(decision.actions.contains(.discardSession) == (state == .unlocked))
    #expect(decision.actions.contains(.purgeArtefacts))
    #expect(decision.events == [.biometricRevokedSystemChange, .passwordAuthFallback(reason: .biometricRevoked)])
}

@Test func enablingWhileUnlockedLogsItAndCountsAsStrongAuthentication() {
    var machine = machine(in: .unlocked)
    let time = startTime.adding(.seconds(30))
    let decision = machine.handle(.biometricEnabled(biometryType: "faceID", at: time))
    #expect(machine.state == .unlocked)
    #expect(decision.actions == [.emit(.biometricEnabled(biometryType: "faceID"))])
    #expect(machine.record.lastStrongAuthenticationAt == time)
}

@Test(arguments: UnlockState.allCases)
func disablingPurgesAndLogsInAnyState(state: UnlockState) {
    var machine = machine(in: state)
    let decision = machine.handle(.biometricDisabled(.userRequest))
    #expect(machine.state == state)
    #expect(decision.actions == [.purgeArtefacts, .emit(.biometricDisabled(reason: .userRequest))])
}

/// One input of each kind, with the states that accept it.
private let acceptance: [(UnlockInput, Set<UnlockState>)] = [
    (.launched, [.startupCheck]),
    (.foreground, [.locked]),
    (.observed(observation()), [.startupCheck]),
    (.biometricCompleted(.unlocked(duration: .zero)), [.promptBiometric]),
    (.retryBiometric, [.biometricFailed]),
    (.usePassword, [.promptBiometric, .biometricFailed]),
    (.passwordAccepted(at: startTime, bootSessionID: "boot-1"), [.requirePassword, .revoked]),
    (.passwordRejected(at: startTime), [.requirePassword, .revoked]),
    (.passwordRefused(at: startTime, retryAfterMs: 1000), [.requirePassword, .revoked]),
    (.enrollmentPasswordAccepted, [.unlocked]),
    (.background, Set(UnlockState.allCases).subtracting([.locked])),
    (.biometricSetChanged, Set(UnlockState.allCases).subtracting([.revoked])),
    (.biometricEnabled(biometryType: "faceID", at: startTime), [.unlocked]),
    (.biometricDisabled(.userRequest), Set(UnlockState.allCases)),
]

@Test(arguments: UnlockState.allCases)
func inputsThatMeanNothingInAStateAreIgnoredAndChangeNothing(state: UnlockState) {
    for (input, accepting) in acceptance where !accepting.contains(state) {
        var machine = machine(in: state)
        let before = (machine.state, machine.record, machine.passwordReason)
        let decision = machine.handle(input)
        #expect(!decision.inputAccepted, "\(input) in \(state)")
        #expect(decision.actions.isEmpty && decision.transitions.isEmpty)
        #expect(machine.state == before.0 && machine.record == before.1 && machine.passwordReason == before.2)
    }
}

@Test func onlyABiometricSuccessOrAPasswordSuccessEnterUnlocked() {
    for state in UnlockState.allCases where state != .unlocked {
        for (input, _) in acceptance {
            var machine = machine(in: state)
            _ = machine.handle(input)
            guard machine.state == .unlocked else { continue }
            switch input {
            case .biometricCompleted(.unlocked), .passwordAccepted: break
            default: Issue.record("\(input) unlocked from \(state)")
            }
        }
    }
}
