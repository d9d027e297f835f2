import AuditChain
import Synchronization
import Testing

@testable import BiometricUnlock
import UnlockSimulation
import TestKit

/// 2026-01-01T00:00:00Z.
let startTime = AuditTimestamp(millisecondsSinceEpoch: 1_767_225_600_000)

extension AuditTimestamp {
    /// This time moved by `duration` (negative to go back).
    func adding(_ duration: Duration) -> AuditTimestamp {
        AuditTimestamp(millisecondsSinceEpoch: millisecondsSinceEpoch + duration.wholeMilliseconds)
    }
}

/// The fixed values of the test account.
enum Fixture {
    static let userId = "user-42"
    static let deviceId = "device-7"
    static let password = Array("correct horse battery staple".utf8)
    static let wrongPassword = Array("tr0ub4dor&3".utf8)
    static let sessionProof: [UInt8] = Array(1...32)
    static let sessionSecret = Array("session-secret-0123456789abcdef!".utf8)
}

/// A controller wired to in-memory platform pieces, a manual clock and seeded randomness.
struct Harness {
    let clock: ManualClock
    let authenticator: ScriptedBiometricAuthenticator
    let keyStore: InMemorySecureKeyStore
    let verifier: InMemoryPasswordVerifier
    let sink: InMemoryAuditSink
    let signals: ManualDeviceSignals
    let controller: BiometricUnlockController<ManualClock>

    init(
        seed: UInt64 = 7,
        keyStore: InMemorySecureKeyStore = InMemorySecureKeyStore(),
        clock: ManualClock = ManualClock(wallTime: startTime),
        authenticator: (any BiometricAuthenticator)? = nil,
        configure: (inout BiometricUnlockConfiguration) -> Void = { _ in }
    ) {
        self.clock = clock
        self.authenticator = ScriptedBiometricAuthenticator(clock: clock)
        self.keyStore = keyStore
        self.verifier = InMemoryPasswordVerifier(
            password: Fixture.password,
            sessionProof: Fixture.sessionProof,
            sessionSecret: Fixture.sessionSecret
        )
        self.sink = InMemoryAuditSink()
        self.signals = ManualDeviceSignals()
        var configuration = BiometricUnlockConfiguration(userId: Fixture.userId, deviceId: Fixture.deviceId)
        configure(&configuration)
        let platform = UnlockPlatform(
            authenticator: authenticator ?? self.authenticator,
            keyStore: keyStore,
            passwordVerifier: verifier,
            wallClock: clock,
            auditSink: sink,
            deviceSignals: signals
        )
        self.controller = BiometricUnlockController(
            configuration: configuration,
            platform: platform,
            clock: clock,
            random: SplitMix64(seed: seed),
            idempotencyKeys: SequentialIdempotencyKeyGenerator()
        )
    }

    /// Submits a copy of `password`.
    func submit(_ password: [UInt8] = Fixture.password) async -> UnlockStepResult {
        var copy = password
        return await controller.submitPassword(&copy)
    }

    /// Enables biometric unlock with the right password.
    @discardableResult
    func enable() async throws -> UnlockStepResult {
        var copy = Fixture.password
        return try await controller.enableBiometrics(password: &copy)
    }

    /// Starts (first unlock, with the password), enables biometric unlock and locks; ready for a foreground.
    func enrolledAndLocked() async throws {
        _ = await controller.start()
        let unlocked = await submit()
        try #require(unlocked.isUnlocked)
        try await enable()
        _ = await controller.lock()
        try #require(await controller.state == .locked)
    }
}

/// The catalogue check of every event; returns the failures' descriptions.
func catalogueFailures(_ events: [AuditEvent]) -> [String] {
    events.compactMap { event -> String? in
        do {
            try EventCatalogue.builtIn.validate(event)
            return nil
        } catch {
            return String(describing: error)
        }
    }
}

/// Type and attributes of events, for exact comparisons.
func summaries(_ events: [AuditEvent]) -> [EventSummary] {
    events.map { EventSummary(type: $0.type, attributes: $0.attributes) }
}

/// An event without the fields every test would repeat.
struct EventSummary: Equatable, CustomStringConvertible {
    var type: String
    var attributes: [String: JSONValue] = [:]

    var description: String { "\(type) \(attributes)" }
}

/// An authenticator that runs a hook while its prompt is shown (to interleave calls or change the key store).
final class HookedAuthenticator: BiometricAuthenticator, Sendable {
    private let result: BiometricPromptResult
    private let hook: Mutex<(@Sendable () async -> Void)?> = Mutex(nil)

    init(result: BiometricPromptResult) {
        self.result = result
    }

    func setHook(_ action: @escaping @Sendable () async -> Void) {
        hook.withLock { $0 = action }
    }

    func availability() async -> BiometricAvailability { .available(biometryType: "touchID") }

    func authenticate(reason: String) async -> BiometricPromptResult {
        let action = hook.withLock { $0 }
        await action?()
        return result
    }
}
