extension BiometricUnlockController {
    /// Feeds one input, performs the resulting actions (feeding back their results), persists the record and
    /// delivers the events. `secret` is released only if the input is accepted and ends in `UNLOCKED`.
    func step(_ input: UnlockInput, releasing secret: SessionSecret? = nil) async -> UnlockStepResult {
        var result = UnlockStepResult(state: machine.state)
        var events: [UnlockAuditEvent] = []
        var inputs: [(UnlockInput, SessionSecret?)] = [(input, secret)]
        var isFirst = true
        while !inputs.isEmpty {
            let next: UnlockInput
            var carried: SessionSecret?
            (next, carried) = inputs.removeFirst()
            let decision = machine.handle(next)
            if isFirst { result.inputAccepted = decision.inputAccepted }
            isFirst = false
            result.transitions += decision.transitions
            if decision.inputAccepted, machine.state == .unlocked { noteStrongAuthentication(next) }
            if carried != nil {
                if decision.inputAccepted, machine.state == .unlocked {
                    result.sessionSecret = carried
                } else {
                    carried?.wipe()
                }
                carried = nil
            }
            for action in decision.actions {
                switch action {
                case .observe:
                    inputs.append((.observed(await observe()), nil))
                case .promptBiometric:
                    let (outcome, released) = await attemptBiometricUnlock()
                    inputs.append((.biometricCompleted(outcome), released))
                case .requestPassword:
                    break
                case .emit(let event):
                    events.append(event)
                case .purgeArtefacts:
                    await platform.keyStore.removeBiometricArtefacts()
                case .discardSession:
                    result.sessionDiscarded = true
                case .report(let error):
                    result.errors.append(error)
                }
            }
        }
        return await finish(result, events: events)
    }

    /// A result for a request that changed nothing; still re-offers the pending events.
    func ignored(accepted: Bool = false) async -> UnlockStepResult {
        var result = UnlockStepResult(state: machine.state)
        result.inputAccepted = accepted
        return await finish(result, events: [])
    }

    /// Persists the record, delivers the events and reports the state as it is at the end. Should another call
    /// have locked or revoked meanwhile (while this one awaited the key store or the sink), a released secret is
    /// wiped rather than returned.
    func finish(_ partial: UnlockStepResult, events: [UnlockAuditEvent]) async -> UnlockStepResult {
        var result = partial
        let stamped = events.map(stamp)
        await persistRecord(into: &result)
        await deliver(stamped, into: &result)
        result.state = machine.state
        result.passwordReason = machine.passwordReason
        if result.state != .unlocked, result.sessionSecret != nil {
            result.sessionSecret?.wipe()
            result.sessionSecret = nil
        }
        return result
    }

    /// A password entry just unlocked (or enabled biometrics): restart the monotonic measure.
    private func noteStrongAuthentication(_ input: UnlockInput) {
        switch input {
        case .passwordAccepted, .biometricEnabled: strongAuthenticationInstant = clock.now
        default: break
        }
    }

    /// Gathers the facts for the policy.
    func observe() async -> UnlockObservation {
        let bootSessionID = await platform.deviceSignals.bootSessionID()
        let passwordChangedAt = await platform.passwordVerifier.passwordChangedAt()
        let keyStatus = await platform.keyStore.biometricKeyStatus()
        return UnlockObservation(
            now: platform.wallClock.currentTime,
            bootSessionID: bootSessionID,
            passwordChangedAt: passwordChangedAt,
            monotonicElapsedSinceStrongAuthentication: strongAuthenticationInstant.map { $0.duration(to: clock.now) },
            keyStatus: keyStatus
        )
    }

    /// Prompt, release K_bio, open the envelope; the duration runs from the prompt to the opened envelope.
    func attemptBiometricUnlock() async -> (BiometricAttemptOutcome, SessionSecret?) {
        let startedAt = clock.now
        switch await platform.authenticator.authenticate(reason: configuration.promptReason) {
        case .failed: return (.recognitionFailed, nil)
        case .cancelled: return (.cancelled, nil)
        case .unavailable: return (.unavailable, nil)
        case .success: break
        }
        var key: [UInt8]
        switch await platform.keyStore.readBiometricKey() {
        case .invalidatedByBiometricChange: return (.keyInvalidated, nil)
        case .missing: return (.artefactsUnreadable, nil)
        case .key(let bytes): key = bytes
        }
        defer { SecureWipe.wipe(&key) }
        guard let stored = await platform.keyStore.readEnvelope(),
            let envelope = try? BiometricEnvelope(serialized: stored),
            let secret = try? envelope.open(key: key, associatedData: associatedData)
        else { return (.artefactsUnreadable, nil) }
        return (.unlocked(duration: startedAt.duration(to: clock.now)), SessionSecret(secret))
    }

    /// The envelope's associated data for this user and device.
    var associatedData: [UInt8] {
        BiometricEnvelope.associatedData(userId: configuration.userId, deviceId: configuration.deviceId)
    }

    /// Saves the record when it changed; a write that keeps failing is reported (ERR-107-020).
    func persistRecord(into result: inout UnlockStepResult) async {
        let current = machine.record
        guard current != savedRecord else { return }
        do {
            try await writeWithRetry("the unlock record") { try await platform.keyStore.saveRecord(current) }
            savedRecord = current
        } catch {
            result.errors.append(error)
        }
    }

    /// Runs a key store write, retrying ``BiometricUnlockConfiguration/keyStoreWriteRetries`` times.
    func writeWithRetry(
        _ what: String,
        _ write: () async throws -> Void
    ) async throws(BiometricUnlockError) {
        let attempts = 1 + max(0, configuration.keyStoreWriteRetries)
        var lastError: (any Error)?
        for _ in 0..<attempts {
            do {
                try await write()
                return
            } catch {
                lastError = error
            }
        }
        throw BiometricUnlockError(
            .keyStoreWriteFailed,
            "the secure key store refused to store \(what) \(attempts) times (last: \(String(describing: lastError!))); "
                + "check the device's secure storage and try again"
        )
    }
}
