public import AuditChain

/// The thin shell around ``UnlockStateMachine``: it turns calls into inputs, performs the machine's actions through
/// the ``UnlockPlatform`` protocols, and delivers the audit events.
///
/// Generic over the monotonic `Clock` that measures unlock durations and the time since the last password entry;
/// tests and simulations pass a ``ManualClock``. Every entry point returns an ``UnlockStepResult``. An actor: calls
/// may interleave while one awaits the platform (a prompt, the sink); the machine ignores a result that arrives in
/// a state that no longer expects it (its secret is then wiped), so interleaving cannot unlock.
///
/// Driving it deterministically (a simulator): give it scripted platform pieces (``ScriptedBiometricAuthenticator``,
/// ``InMemorySecureKeyStore``, ``InMemoryPasswordVerifier``, ``ManualDeviceSignals``, ``InMemoryAuditSink``), a
/// ``ManualClock`` as both clocks, a seeded ``SplitMix64`` and a ``SequentialIdempotencyKeyGenerator``, and await
/// each call before the next.
public actor BiometricUnlockController<MonotonicClock: Clock> where MonotonicClock.Duration == Duration {
    /// The configuration.
    public let configuration: BiometricUnlockConfiguration
    let platform: UnlockPlatform
    let clock: MonotonicClock
    var machine: UnlockStateMachine
    var random: any RandomNumberGenerator & Sendable
    var idempotencyKeys: any IdempotencyKeyGenerator
    var pending: PendingAuditBuffer
    var strongAuthenticationInstant: MonotonicClock.Instant?
    var savedRecord: UnlockRecord?
    /// When this process saw the current password lockout start, by the monotonic clock.
    var passwordLockoutInstant: MonotonicClock.Instant?
    /// True while the verifier checks a password: a concurrent attempt is refused unchecked.
    var isVerifyingPassword = false
    var isDelivering = false
    var started = false

    /// Creates a controller in `STARTUP_CHECK`; call ``start()`` next.
    /// - Parameters:
    ///   - random: source of the HKDF salt and the AES-GCM nonce (a seeded one only in tests and simulations).
    ///   - idempotencyKeys: source of the events' idempotency keys.
    public init(
        configuration: BiometricUnlockConfiguration,
        platform: UnlockPlatform,
        clock: MonotonicClock,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        idempotencyKeys: any IdempotencyKeyGenerator = RandomIdempotencyKeyGenerator()
    ) {
        self.configuration = configuration
        self.platform = platform
        self.clock = clock
        self.random = random
        self.idempotencyKeys = idempotencyKeys
        self.machine = UnlockStateMachine(settings: configuration.policy)
        self.pending = PendingAuditBuffer(capacity: configuration.pendingEventCapacity)
    }

    /// The current state.
    public var state: UnlockState { machine.state }
    /// The record as the machine holds it.
    public var record: UnlockRecord { machine.record }
    /// Events waiting for the sink, oldest first.
    public var pendingEvents: [AuditEvent] { pending.events }

    /// Launch: loads the record (an unreadable one forces the password, ERR-107-050), evaluates the policy and,
    /// when a biometric is allowed, prompts for it.
    public func start() async -> UnlockStepResult {
        guard !started else { return await ignored() }
        started = true
        do {
            let stored = try await platform.keyStore.loadRecord()
            savedRecord = stored
            machine = UnlockStateMachine(settings: configuration.policy, record: stored ?? .initial)
        } catch {
            savedRecord = nil
            machine = UnlockStateMachine(settings: configuration.policy, record: .unreadable)
        }
        return await step(.launched)
    }

    /// The app came to the foreground: from `LOCKED`, a new startup check (and prompt, when allowed).
    public func foreground() async -> UnlockStepResult { await step(.foreground) }
    /// The app went to the background: `LOCKED`.
    public func background() async -> UnlockStepResult { await step(.background) }
    /// The user locked the app: `LOCKED`.
    public func lock() async -> UnlockStepResult { await step(.lock) }
    /// The inactivity timeout fired: `LOCKED`.
    public func timeout() async -> UnlockStepResult { await step(.timeout) }
    /// Another biometric attempt from `BIOMETRIC_FAILED` (the password once the attempts are used up).
    public func retryBiometric() async -> UnlockStepResult { await step(.retryBiometric) }
    /// The user prefers the password to the biometric: `REQUIRE_PASSWORD`.
    public func usePassword() async -> UnlockStepResult { await step(.usePassword) }
    /// Biometric unlock off: every artefact removed, `BIOMETRIC_DISABLED` logged. Valid in any state.
    public func disableBiometrics(reason: DisableReason = .userRequest) async -> UnlockStepResult {
        await step(.biometricDisabled(reason))
    }
    /// Offers the pending audit events to the sink again, without any other input.
    public func flushAuditEvents() async -> UnlockStepResult { await ignored(accepted: true) }

    /// The platform says the enrolled biometric set changed: when the key store confirms K_bio is invalidated,
    /// `REVOKED` (artefacts purged, event logged, password required); otherwise nothing changes.
    public func biometricSetDidChange() async -> UnlockStepResult {
        guard await platform.keyStore.biometricKeyStatus() == .invalidatedByBiometricChange else {
            return await ignored()
        }
        return await step(.biometricSetChanged)
    }

    /// Checks the password in `REQUIRE_PASSWORD` or `REVOKED`; `password` is wiped whatever happens.
    ///
    /// Success unlocks, returns the session secret and logs `PASSWORD_AUTH_SUCCESS`; a wrong password stays, logs
    /// `PASSWORD_AUTH_FAILURE` and reports ERR-107-010 (at the throttling threshold also `PASSWORD_ATTEMPTS_THROTTLED`
    /// and ERR-107-011). While attempts are throttled (or another attempt is being checked) the password is not
    /// checked: the attempt is logged as `PASSWORD_AUTH_FAILURE` with ERR-107-011 and `retryAfterMs`. In any other
    /// state the password is not checked and the result says the input was not accepted.
    public func submitPassword(_ password: inout [UInt8]) async -> UnlockStepResult {
        guard machine.state.acceptsPassword else {
            SecureWipe.wipe(&password)
            return await ignored()
        }
        let now = platform.wallClock.currentTime
        if let retryAfterMs = passwordRetryAfterMilliseconds(now: now) {
            SecureWipe.wipe(&password)
            return await passwordStep(.passwordRefused(at: now, retryAfterMs: retryAfterMs))
        }
        let verification = await verifyPassword(&password)
        guard case .accepted(var grant) = consume verification else {
            return await passwordStep(.passwordRejected(at: platform.wallClock.currentTime))
        }
        SecureWipe.wipe(&grant.sessionProof)
        let bootSessionID = await platform.deviceSignals.bootSessionID()
        let input = UnlockInput.passwordAccepted(at: platform.wallClock.currentTime, bootSessionID: bootSessionID)
        return await passwordStep(input, releasing: SessionSecret(grant.sessionSecret))
    }
}

extension BiometricUnlockController where MonotonicClock == ContinuousClock {
    /// Creates a controller measuring durations with the continuous clock, with system randomness.
    public init(configuration: BiometricUnlockConfiguration, platform: UnlockPlatform) {
        self.init(configuration: configuration, platform: platform, clock: ContinuousClock())
    }
}
