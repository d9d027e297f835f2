import AuditChain

extension BiometricUnlockController {
    /// The milliseconds before a password may be checked, or nil when it may be checked now: the record's throttle
    /// (by the wall clock and, while this process lives, the monotonic clock), or 0 while another attempt is being
    /// checked (so concurrent calls cannot get round the throttle).
    func passwordRetryAfterMilliseconds(now: AuditTimestamp) -> Int64? {
        if isVerifyingPassword { return 0 }
        let remaining = machine.passwordRetryAfterMilliseconds(
            now: now,
            monotonicElapsedSinceLockout: passwordLockoutInstant.map { $0.duration(to: clock.now) }
        )
        return remaining > 0 ? remaining : nil
    }

    /// Asks the verifier, marking the check as in progress; `password` is wiped.
    func verifyPassword(_ password: inout [UInt8]) async -> PasswordVerification {
        isVerifyingPassword = true
        defer { isVerifyingPassword = false }
        let verification = await platform.passwordVerifier.verify(password: password)
        SecureWipe.wipe(&password)
        return verification
    }

    /// ``step(_:releasing:)`` for a password input, noting by the monotonic clock when it starts a new lockout.
    func passwordStep(_ input: UnlockInput, releasing secret: SessionSecret? = nil) async -> UnlockStepResult {
        let before = machine.record.passwordThrottle.lockout
        let instant = clock.now
        let result = await step(input, releasing: secret)
        let after = machine.record.passwordThrottle.lockout
        if after != before { passwordLockoutInstant = after == nil ? nil : instant }
        return result
    }
}

extension UnlockStepResult {
    /// This result with the events and errors of an `earlier` step of the same call in front of its own.
    func following(_ earlier: UnlockStepResult) -> UnlockStepResult {
        var merged = self
        merged.transitions = earlier.transitions + transitions
        merged.errors = earlier.errors + errors
        merged.emittedEvents = earlier.emittedEvents + emittedEvents
        merged.deliveredEvents = earlier.deliveredEvents + deliveredEvents
        merged.droppedEvents = earlier.droppedEvents + droppedEvents
        return merged
    }
}
