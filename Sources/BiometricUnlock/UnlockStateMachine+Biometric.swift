extension UnlockStateMachine {
    /// `STARTUP_CHECK`: revoke when K_bio was invalidated, else follow the policy.
    mutating func decide(_ observation: UnlockObservation, _ decision: inout UnlockDecision) {
        let context = context(for: observation)
        let policyDecision = policy.evaluate(context)
        if (record.failedBiometricAttempts ?? -1) < 0 {
            record.failedBiometricAttempts = 0
            decision.report(.counterInconsistent())
        }
        if observation.keyStatus == .invalidatedByBiometricChange {
            revoke(reason: policyDecision.passwordReason ?? .biometricRevoked, &decision)
        } else if let reason = policyDecision.passwordReason {
            requirePassword(reason, &decision)
        } else {
            move(to: .promptBiometric, &decision)
            decision.actions.append(.promptBiometric)
        }
    }

    /// The policy's view of the record and an observation.
    public func context(for observation: UnlockObservation) -> UnlockContext {
        UnlockContext(
            now: observation.now,
            rebootDetected: record.bootSessionAtLastUnlock.map { $0 != observation.bootSessionID } ?? false,
            passwordChangedAt: observation.passwordChangedAt,
            failedBiometricAttempts: record.failedBiometricAttempts,
            lastStrongAuthenticationAt: record.lastStrongAuthenticationAt,
            monotonicElapsedSinceStrongAuthentication: observation.monotonicElapsedSinceStrongAuthentication,
            biometricSetChanged: observation.keyStatus == .invalidatedByBiometricChange,
            biometricsEnabled: observation.keyStatus != .notEnrolled
        )
    }

    /// `PROMPT_BIOMETRIC`: the outcome of an attempt.
    mutating func complete(_ outcome: BiometricAttemptOutcome, _ decision: inout UnlockDecision) {
        switch outcome {
        case .unlocked(let duration):
            record.failedBiometricAttempts = 0
            move(to: .unlocked, &decision)
            decision.actions.append(.emit(.biometricAuthSuccess(unlockDurationMs: duration.wholeMilliseconds)))
        case .recognitionFailed:
            let attempts = max(0, record.failedBiometricAttempts ?? 0) + 1
            record.failedBiometricAttempts = attempts
            move(to: .biometricFailed, &decision)
            decision.actions.append(
                .emit(.biometricAuthFailure(attemptCount: attempts, errorCode: .recognitionFailed))
            )
            decision.report(.recognitionFailed(attempt: attempts, of: maxAttempts))
            if attempts >= maxAttempts { requirePassword(.lockout, &decision) }
        case .cancelled:
            requirePassword(.promptCancelled, &decision)
        case .unavailable:
            requirePassword(.biometricUnavailable, &decision)
        case .keyInvalidated:
            revoke(&decision)
        case .artefactsUnreadable:
            decision.actions += [.purgeArtefacts, .emit(.biometricDisabled(reason: .artefactsUnreadable))]
            requirePassword(.artefactsUnreadable, &decision)
        }
    }

    /// `BIOMETRIC_FAILED`: prompt again while attempts remain, else require the password.
    mutating func retry(_ decision: inout UnlockDecision) {
        if (record.failedBiometricAttempts ?? maxAttempts) < maxAttempts {
            move(to: .promptBiometric, &decision)
            decision.actions.append(.promptBiometric)
        } else {
            requirePassword(.lockout, &decision)
        }
    }
}
