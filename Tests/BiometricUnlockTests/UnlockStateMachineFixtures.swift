import AuditChain
import Testing

@testable import BiometricUnlock

/// Enabled, password entered a minute ago in boot session `boot-1`.
let enabledRecord = UnlockRecord(
    lastStrongAuthenticationAt: startTime.adding(.seconds(-60)),
    failedBiometricAttempts: 0,
    bootSessionAtLastUnlock: "boot-1"
)

/// An observation in which the policy allows a biometric.
func observation(
    now: AuditTimestamp = startTime,
    boot: String = "boot-1",
    keyStatus: BiometricKeyStatus = .enrolled
) -> UnlockObservation {
    UnlockObservation(now: now, bootSessionID: boot, keyStatus: keyStatus)
}

/// A machine driven into `state` by ordinary inputs.
func machine(in state: UnlockState, record: UnlockRecord = enabledRecord) -> UnlockStateMachine {
    var machine = UnlockStateMachine(record: record)
    let path: [UnlockInput] =
        switch state {
        case .startupCheck: []
        case .promptBiometric: [.observed(observation())]
        case .biometricFailed: [.observed(observation()), .biometricCompleted(.recognitionFailed)]
        case .requirePassword: [.observed(observation()), .biometricCompleted(.cancelled)]
        case .unlocked: [.observed(observation()), .biometricCompleted(.unlocked(duration: .milliseconds(5)))]
        case .locked: [.observed(observation()), .biometricCompleted(.unlocked(duration: .zero)), .lock]
        case .revoked: [.observed(observation()), .biometricSetChanged]
        }
    for input in path { _ = machine.handle(input) }
    #expect(machine.state == state)
    return machine
}

let rejected = BiometricUnlockError.Code.badPassword

func reportedCodes(_ decision: UnlockDecision) -> [BiometricUnlockError.Code] {
    decision.actions.compactMap {
        if case .report(let error) = $0 { return error.code }
        return nil
    }
}

func withoutReports(_ actions: [UnlockAction]) -> [UnlockAction] {
    actions.filter {
        if case .report = $0 { return false }
        return true
    }
}
