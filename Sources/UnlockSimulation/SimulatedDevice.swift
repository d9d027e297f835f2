import BiometricUnlock
import AuditChain

/// One simulated user on their device: the platform doubles, the controller, and the session script.
///
/// The controller is replaced at every relaunch (after a reboot, or when the system ended the app), as a new
/// process would create it; the key store, the password verifier, the device signals and the clock live on.
final class SimulatedDevice {
    private let number: Int
    private let userId: String
    private let deviceId: String
    private let keys: SharedIdempotencyKeys
    private let sink: any AuditSink
    private let clock: ManualClock
    private let authenticator: ScriptedBiometricAuthenticator
    private let keyStore = InMemorySecureKeyStore()
    private let verifier: InMemoryPasswordVerifier
    private let signals = ManualDeviceSignals()
    private var controller: BiometricUnlockController<ManualClock>?
    private var password: [UInt8]
    private var passwordVersion = 1

    /// Creates user `number`'s device, drawing its session proof and secret from `random`.
    init(number: Int, seed: UInt64, startTime: AuditTimestamp, sink: any AuditSink, random: inout SimulationRandom) {
        self.number = number
        userId = "user-\(number)"
        deviceId = "device-\(number)"
        keys = SharedIdempotencyKeys(prefix: "sim-\(seed)-user-\(number)")
        self.sink = sink
        clock = ManualClock(wallTime: startTime)
        authenticator = ScriptedBiometricAuthenticator(clock: clock)
        password = Self.password(user: number, version: 1)
        verifier = InMemoryPasswordVerifier(
            password: password,
            sessionProof: Self.bytes(32, from: &random),
            sessionSecret: Self.bytes(32, from: &random)
        )
    }

    // MARK: - The session script

    /// One session: time away, what happened meanwhile, opening the app, unlocking, using it, leaving it.
    func runSession(_ random: inout SimulationRandom, _ summary: inout UnlockSimulationSummary) async {
        clock.advance(by: random.duration(in: random.pick(Self.absences)))

        var relaunch = controller == nil
        if random.chance(perMille: 50) {
            signals.simulateReboot()
            relaunch = true
        } else if random.chance(perMille: 70) {
            relaunch = true  // the system ended the app in the background
        }
        if random.chance(perMille: 60), await keyStore.biometricKeyStatus() == .enrolled {
            keyStore.simulateBiometricSetChange()  // a face or finger enrolled or removed in the settings
            if !relaunch, let controller, random.chance(perMille: 500) {
                record(await controller.biometricSetDidChange(), &summary)
            }
        }

        let poorBiometric = random.chance(perMille: 200)  // wet finger, mask, bad light
        if relaunch {
            let controller = await relaunchApp(&random, &summary)
            scriptPrompt(poor: poorBiometric, &random)
            record(await controller.start(), &summary)
        } else if let controller, await controller.state == .locked {
            scriptPrompt(poor: poorBiometric, &random)
            record(await controller.foreground(), &summary)
        }
        guard let controller else { return }

        var unlocked = false
        interaction: for _ in 0..<16 {
            switch await controller.state {
            case .biometricFailed:
                switch random.pick(Self.afterFailure) {
                case .retry:
                    scriptPrompt(poor: poorBiometric, &random)
                    record(await controller.retryBiometric(), &summary)
                case .usePassword:
                    record(await controller.usePassword(), &summary)
                case .giveUp:
                    break interaction
                }
            case .requirePassword, .revoked:
                guard !random.chance(perMille: 40) else { break interaction }  // gives up
                clock.advance(by: random.duration(in: .seconds(3)...(.seconds(20))))
                await submitPassword(wrong: random.chance(perMille: 120), &summary)
            case .unlocked:
                unlocked = true
                break interaction
            case .startupCheck, .promptBiometric, .locked:
                break interaction
            }
        }
        if unlocked { await useApp(&random, &summary) }
        await leaveApp(&random, &summary)
    }

    /// Unlocked: the user works, and may enable or disable biometric unlock or change the password.
    private func useApp(_ random: inout SimulationRandom, _ summary: inout UnlockSimulationSummary) async {
        guard let controller else { return }
        clock.advance(by: random.duration(in: .seconds(5)...(.seconds(300))))
        if await keyStore.biometricKeyStatus() == .notEnrolled {
            if random.chance(perMille: 450) {
                await enableBiometrics(wrong: random.chance(perMille: 50), &summary)
            }
        } else if random.chance(perMille: 25) {
            record(await controller.disableBiometrics(), &summary)
        }
        if random.chance(perMille: 30) {
            passwordVersion += 1
            password = Self.password(user: number, version: passwordVersion)
            verifier.changePassword(to: password, at: clock.currentTime)
        }
        clock.advance(by: random.duration(in: .seconds(5)...(.seconds(600))))
    }

    /// The session ends: background, lock, or the inactivity timeout.
    private func leaveApp(_ random: inout SimulationRandom, _ summary: inout UnlockSimulationSummary) async {
        guard let controller, await controller.state != .locked else { return }
        switch random.pick(Self.endings) {
        case .background:
            record(await controller.background(), &summary)
        case .lock:
            record(await controller.lock(), &summary)
        case .timeout:
            clock.advance(by: random.duration(in: .seconds(60)...(.seconds(300))))
            record(await controller.timeout(), &summary)
        }
    }

    /// How long the user stays away before a session: mostly minutes, sometimes hours or days, so that the
    /// 30-minute strong-authentication timeout and the 24-hour password-change window both come into play.
    private static let absences: [(ClosedRange<Duration>, perMille: Int)] = [
        (.seconds(5)...(.seconds(5 * 60)), perMille: 500),
        (.seconds(5 * 60)...(.seconds(30 * 60)), perMille: 250),
        (.seconds(30 * 60)...(.seconds(4 * 3600)), perMille: 150),
        (.seconds(4 * 3600)...(.seconds(30 * 3600)), perMille: 70),
        (.seconds(30 * 3600)...(.seconds(72 * 3600)), perMille: 30),
    ]

    /// What the prompt answers in an ordinary session.
    private static let promptAnswers: [(BiometricPromptResult, perMille: Int)] = [
        (.success, perMille: 880), (.failed, perMille: 60), (.cancelled, perMille: 45), (.unavailable, perMille: 15),
    ]

    /// What the prompt answers in a session where the biometric reads badly (wet finger, mask, bad light).
    private static let poorPromptAnswers: [(BiometricPromptResult, perMille: Int)] = [
        (.success, perMille: 150), (.failed, perMille: 800), (.cancelled, perMille: 40), (.unavailable, perMille: 10),
    ]

    /// What the user does after a failed attempt.
    private enum AfterFailure { case retry, usePassword, giveUp }
    private static let afterFailure: [(AfterFailure, perMille: Int)] = [
        (.retry, perMille: 800), (.usePassword, perMille: 150), (.giveUp, perMille: 50),
    ]

    /// How a session ends.
    private enum Ending { case background, lock, timeout }
    private static let endings: [(Ending, perMille: Int)] = [
        (.background, perMille: 550), (.lock, perMille: 250), (.timeout, perMille: 200),
    ]

    // MARK: - Calls into the controller

    /// Replaces the controller as a new process would (offering its pending events a last time).
    private func relaunchApp(
        _ random: inout SimulationRandom,
        _ summary: inout UnlockSimulationSummary
    ) async -> BiometricUnlockController<ManualClock> {
        if let controller {
            let flushed = await controller.flushAuditEvents()
            record(flushed, &summary)
            summary.undeliveredEvents += flushed.pendingEventCount
        }
        let platform = UnlockPlatform(
            authenticator: authenticator,
            keyStore: keyStore,
            passwordVerifier: verifier,
            wallClock: clock,
            auditSink: sink,
            deviceSignals: signals
        )
        let controller = BiometricUnlockController(
            configuration: BiometricUnlockConfiguration(userId: userId, deviceId: deviceId),
            platform: platform,
            clock: clock,
            random: SplitMix64(seed: random.next()),
            idempotencyKeys: keys.generator
        )
        self.controller = controller
        return controller
    }

    /// Sets what the next biometric prompt answers and how long the user takes.
    private func scriptPrompt(poor: Bool, _ random: inout SimulationRandom) {
        let result = random.pick(poor ? Self.poorPromptAnswers : Self.promptAnswers)
        let takes = random.duration(in: .milliseconds(250)...(.milliseconds(2500)))
        authenticator.setScript([ScriptedBiometricAuthenticator.Response(result, takes: takes)])
    }

    /// Types the password (or a wrong one).
    private func submitPassword(wrong: Bool, _ summary: inout UnlockSimulationSummary) async {
        guard let controller else { return }
        var typed = wrong ? Array("not-the-password".utf8) : password
        let result = await controller.submitPassword(&typed)
        record(result, &summary)
        if result.isUnlocked, result.inputAccepted { summary.passwordUnlocks += 1 }
        if result.errorCodes.contains(.badPassword) { summary.rejectedPasswords += 1 }
    }

    /// Enables biometric unlock with the password (or a wrong one, which is refused and logged as a failed password attempt).
    private func enableBiometrics(wrong: Bool, _ summary: inout UnlockSimulationSummary) async {
        guard let controller else { return }
        var typed = wrong ? Array("not-the-password".utf8) : password
        do {
            record(try await controller.enableBiometrics(password: &typed), &summary)
        } catch {
            if error.code == .badPassword { summary.rejectedPasswords += 1 }
        }
    }

    /// Accounts for a step: the events the sink took, unlocks and audit failures.
    private func record(_ result: UnlockStepResult, _ summary: inout UnlockSimulationSummary) {
        summary.biometricUnlocks += result.emittedEvents.count { $0.type == "BIOMETRIC_AUTH_SUCCESS" }
        summary.auditFailures += result.errors.filter { $0.code == .auditUnavailable }
        summary.undeliveredEvents += result.droppedEvents.count
    }

    /// The end of the run: the pending events are offered a last time.
    func close(_ summary: inout UnlockSimulationSummary) async {
        guard let controller else { return }
        let flushed = await controller.flushAuditEvents()
        record(flushed, &summary)
        summary.undeliveredEvents += flushed.pendingEventCount
    }

    // MARK: - Fixed material

    /// The password of a user after `version - 1` changes.
    private static func password(user: Int, version: Int) -> [UInt8] {
        Array("simulated-password-\(user)-v\(version)".utf8)
    }

    /// Random bytes for the verifier's session proof and secret.
    private static func bytes(_ count: Int, from random: inout SimulationRandom) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
}
