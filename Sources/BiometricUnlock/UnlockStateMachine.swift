/// The unlock flow as a pure state machine: an input in, the new state and the actions out.
///
/// It performs nothing itself; ``BiometricUnlockController`` performs the actions through the platform protocols
/// and feeds their results back. Every transition is listed in docs/BIOMETRIC.md ("State diagram"). Inputs that
/// mean nothing in the current state are ignored (``UnlockDecision/inputAccepted`` is false) and change nothing.
public struct UnlockStateMachine: Sendable {
    /// The current state.
    public internal(set) var state: UnlockState = .startupCheck
    /// What must survive a relaunch; the shell persists it whenever it changes.
    public internal(set) var record: UnlockRecord
    /// Why the password is required, while in `REQUIRE_PASSWORD` or `REVOKED`.
    public internal(set) var passwordReason: PasswordReason?
    /// The policy deciding at `STARTUP_CHECK`.
    public let policy: UnlockPolicyEngine

    /// Creates a machine in `STARTUP_CHECK` with the record loaded from the key store.
    public init(settings: UnlockPolicySettings = .init(), record: UnlockRecord = .initial) {
        self.policy = UnlockPolicyEngine(settings: settings)
        self.record = record
    }

    /// The attempts allowed before `LOCKOUT`.
    var maxAttempts: Int { policy.settings.maxBiometricAttempts }

    /// Applies one input.
    public mutating func handle(_ input: UnlockInput) -> UnlockDecision {
        var decision = UnlockDecision()
        switch input {
        case .launched:
            guard state == .startupCheck else { return ignored() }
            decision.actions.append(.observe)
        case .foreground:
            guard state == .locked else { return ignored() }
            move(to: .startupCheck, &decision)
            decision.actions.append(.observe)
        case .observed(let observation):
            guard state == .startupCheck else { return ignored() }
            decide(observation, &decision)
        case .biometricCompleted(let outcome):
            guard state == .promptBiometric else { return ignored() }
            complete(outcome, &decision)
        case .retryBiometric:
            guard state == .biometricFailed else { return ignored() }
            retry(&decision)
        case .usePassword:
            guard state == .promptBiometric || state == .biometricFailed else { return ignored() }
            requirePassword(.userChosePassword, &decision)
        case .passwordAccepted(let time, let bootSessionID):
            guard state.acceptsPassword else { return ignored() }
            let attempt = record.passwordThrottle.nextAttemptNumber
            let reason = unlockAttemptReason
            record = UnlockRecord(
                lastStrongAuthenticationAt: time,
                failedBiometricAttempts: 0,
                bootSessionAtLastUnlock: bootSessionID,
                passwordThrottle: AttemptThrottle()
            )
            move(to: .unlocked, &decision)
            decision.actions.append(.emit(.passwordAuthSuccess(attemptCount: attempt, reason: reason)))
        case .passwordRejected(let time, let forEnrollment):
            guard acceptsPasswordAttempt(forEnrollment: forEnrollment) else { return ignored() }
            rejectPassword(at: time, forEnrollment: forEnrollment, &decision)
        case .passwordRefused(let time, let retryAfterMs, let forEnrollment):
            guard acceptsPasswordAttempt(forEnrollment: forEnrollment) else { return ignored() }
            refusePassword(at: time, retryAfterMs: retryAfterMs, forEnrollment: forEnrollment, &decision)
        case .enrollmentPasswordAccepted:
            guard state == .unlocked else { return ignored() }
            let attempt = record.passwordThrottle.nextAttemptNumber
            record.passwordThrottle.recordSuccess()
            decision.actions.append(.emit(.passwordAuthSuccess(attemptCount: attempt, reason: .biometricEnrollment)))
        case .background, .lock, .timeout:
            guard state != .locked else { return ignored() }
            if state == .unlocked { decision.actions.append(.discardSession) }
            move(to: .locked, &decision)
        case .biometricSetChanged:
            guard state != .revoked else { return ignored() }
            revoke(&decision)
        case .biometricEnabled(let biometryType, let time):
            guard state == .unlocked else { return ignored() }
            record.lastStrongAuthenticationAt = time
            record.failedBiometricAttempts = 0
            decision.actions.append(.emit(.biometricEnabled(biometryType: biometryType)))
        case .biometricDisabled(let reason):
            decision.actions += [.purgeArtefacts, .emit(.biometricDisabled(reason: reason))]
        }
        return decision
    }

    /// Moves to `target`, recording the transition; leaving a password state forgets its reason.
    mutating func move(to target: UnlockState, _ decision: inout UnlockDecision) {
        guard target != state else { return }
        decision.transitions.append(UnlockTransition(from: state, to: target))
        state = target
        if !target.acceptsPassword { passwordReason = nil }
    }

    /// Moves to `REQUIRE_PASSWORD` (or `target`), logs the fallback and asks for the password.
    mutating func requirePassword(
        _ reason: PasswordReason,
        to target: UnlockState = .requirePassword,
        _ decision: inout UnlockDecision
    ) {
        move(to: target, &decision)
        passwordReason = reason
        decision.actions.append(.emit(.passwordAuthFallback(reason: reason)))
        if let error = BiometricUnlockError.forFallback(reason, maxAttempts: maxAttempts) { decision.report(error) }
        decision.actions.append(.requestPassword(reason))
    }

    /// The enrolled biometric set changed: purge, log, and require the password in `REVOKED`.
    mutating func revoke(reason: PasswordReason = .biometricRevoked, _ decision: inout UnlockDecision) {
        if state == .unlocked { decision.actions.append(.discardSession) }
        decision.actions += [.purgeArtefacts, .emit(.biometricRevokedSystemChange)]
        decision.report(.biometricSetChanged())
        requirePassword(reason, to: .revoked, &decision)
    }

    private func ignored() -> UnlockDecision {
        var decision = UnlockDecision()
        decision.inputAccepted = false
        return decision
    }
}

extension UnlockDecision {
    /// Adds an error unless one with the same code is already reported.
    mutating func report(_ error: BiometricUnlockError) {
        let already = actions.contains {
            if case .report(let existing) = $0 { return existing.code == error.code }
            return false
        }
        if !already { actions.append(.report(error)) }
    }
}
