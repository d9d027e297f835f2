import Testing

@testable import BiometricUnlock
import UnlockSimulation

@Test func responsesComeInScriptOrderThenTheFallback() async {
    let clock = ManualClock()
    let authenticator = ScriptedBiometricAuthenticator(
        script: [.init(.failed, takes: .milliseconds(200)), .init(.success)],
        fallback: .unavailable,
        clock: clock
    )
    let start = clock.now
    #expect(await authenticator.authenticate(reason: "a") == .failed)
    #expect(start.duration(to: clock.now) == .milliseconds(200))
    #expect(await authenticator.authenticate(reason: "b") == .success)
    #expect(await authenticator.authenticate(reason: "c") == .unavailable)
    #expect(authenticator.prompts == ["a", "b", "c"])
}

@Test func theScriptCanBeReplacedAndAvailabilityChanged() async {
    let authenticator = ScriptedBiometricAuthenticator(script: [.init(.failed)])
    authenticator.setScript([.init(.cancelled)])
    authenticator.setAvailability(.unavailable)
    #expect(await authenticator.availability() == .unavailable)
    #expect(await authenticator.authenticate(reason: "x") == .cancelled)
}
