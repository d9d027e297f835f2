extension BiometricUnlockController {
    /// Enables biometric unlock with the password (only while `UNLOCKED`); `password` is wiped whatever happens.
    ///
    /// Derives K_bio from the verified session proof, stores it bound to the current biometric set, stores the
    /// envelope of the session secret, and logs `BIOMETRIC_ENABLED`. Key store writes are retried; on failure
    /// every partial artefact is removed. The password attempt is throttled and logged as for ``submitPassword(_:)``
    /// (`PASSWORD_AUTH_SUCCESS` / `PASSWORD_AUTH_FAILURE` with reason `BIOMETRIC_ENROLLMENT`).
    /// - Throws: ``BiometricUnlockError``: ERR-107-001 when not unlocked or no biometric is available,
    ///   ERR-107-010 for a wrong password, ERR-107-011 while password attempts are throttled, ERR-107-020 when the
    ///   key store keeps refusing.
    public func enableBiometrics(password: inout [UInt8]) async throws(BiometricUnlockError) -> UnlockStepResult {
        guard machine.state == .unlocked else {
            SecureWipe.wipe(&password)
            throw BiometricUnlockError(
                .unavailable,
                "biometric unlock can be enabled only while unlocked (state \(machine.state)); unlock first"
            )
        }
        guard case .available(let biometryType) = await platform.authenticator.availability() else {
            SecureWipe.wipe(&password)
            throw BiometricUnlockError(
                .unavailable,
                "no biometric is available on this device; enrol a face or fingerprint in the system settings first"
            )
        }
        let now = platform.wallClock.currentTime
        if let retryAfterMs = passwordRetryAfterMilliseconds(now: now) {
            SecureWipe.wipe(&password)
            _ = await passwordStep(.passwordRefused(at: now, retryAfterMs: retryAfterMs, forEnrollment: true))
            throw BiometricUnlockError.passwordThrottled(retryAfterMs: retryAfterMs)
        }
        let verification = await verifyPassword(&password)
        guard case .accepted(var grant) = consume verification else {
            let rejected = await passwordStep(
                .passwordRejected(at: platform.wallClock.currentTime, forEnrollment: true)
            )
            let throttled = rejected.errorCodes.contains(.passwordThrottled) ? " (further attempts are throttled)" : ""
            throw BiometricUnlockError(
                .badPassword,
                "the password was not accepted, so biometric unlock stays off\(throttled)"
            )
        }
        defer { grant.wipe() }
        let verified = await passwordStep(.enrollmentPasswordAccepted)
        var salt = randomBytes(BiometricEnvelope.saltByteCount)
        defer { SecureWipe.wipe(&salt) }
        var key = try BiometricEnvelope.deriveKey(sessionProof: grant.sessionProof, salt: salt)
        defer { SecureWipe.wipe(&key) }
        let envelope = try BiometricEnvelope.seal(
            grant.sessionSecret,
            key: key,
            nonce: randomBytes(BiometricEnvelope.nonceByteCount),
            associatedData: associatedData
        )
        do {
            try await writeWithRetry("the biometric key") { try await platform.keyStore.storeBiometricKey(key) }
            try await writeWithRetry("the envelope") { try await platform.keyStore.storeEnvelope(envelope.serialized) }
        } catch {
            await platform.keyStore.removeBiometricArtefacts()
            throw error
        }
        let result = await step(.biometricEnabled(biometryType: biometryType, at: platform.wallClock.currentTime))
            .following(verified)
        guard result.inputAccepted else {
            await platform.keyStore.removeBiometricArtefacts()
            throw BiometricUnlockError(
                .unavailable,
                "the app locked while biometric unlock was being enabled, so it was not enabled; unlock and try again"
            )
        }
        return result
    }

    /// Bytes from the injected generator (salts and nonces).
    func randomBytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            var word = random.next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return Array(bytes.prefix(count))
    }
}
