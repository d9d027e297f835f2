import AuditChain
import Testing

@testable import BiometricUnlock

/// A context in which nothing requires the password: enabled, password entered 2 minutes ago.
private func allowedContext() -> UnlockContext {
    UnlockContext(now: startTime, lastStrongAuthenticationAt: startTime.adding(.seconds(-120)))
}

/// Makes `reason` true in a context without undoing the other reasons' triggers.
private func trigger(_ reason: PasswordReason, in context: inout UnlockContext) {
    switch reason {
    case .deviceBoot: context.rebootDetected = true
    case .clockInconsistent: context.monotonicElapsedSinceStrongAuthentication = .seconds(10 * 24 * 3600)
    case .passwordChanged: context.passwordChangedAt = context.now.adding(.seconds(-60))
    case .counterInconsistent: context.failedBiometricAttempts = nil
    case .lockout: context.failedBiometricAttempts = 3
    case .timeoutExceeded: context.lastStrongAuthenticationAt = context.now.adding(.seconds(-31 * 60))
    case .biometricRevoked: context.biometricSetChanged = true
    case .firstUnlock: context.biometricsEnabled = false
    default: Issue.record("\(reason) is not a policy reason")
    }
}

private let engine = UnlockPolicyEngine()

@Test func nothingRequiresThePasswordInTheAllowedContext() {
    #expect(engine.evaluate(allowedContext()) == .biometricAllowed)
}

@Test(arguments: PasswordReason.policyOrder)
func eachPolicyReasonAloneRequiresThePassword(reason: PasswordReason) {
    var context = allowedContext()
    trigger(reason, in: &context)
    #expect(engine.evaluate(context) == .passwordRequired(reason))
}

@Test func policyReasonsFollowTheDocumentedPrecedence() {
    let order = PasswordReason.policyOrder
    #expect(
        order == [
            .deviceBoot, .clockInconsistent, .passwordChanged, .counterInconsistent, .lockout, .timeoutExceeded,
            .biometricRevoked, .firstUnlock,
        ]
    )
    for (index, higher) in order.enumerated() {
        for lower in order[(index + 1)...] where !(higher == .counterInconsistent && lower == .lockout) {
            var context = allowedContext()
            trigger(lower, in: &context)
            trigger(higher, in: &context)
            #expect(engine.evaluate(context) == .passwordRequired(higher), "\(higher) must win over \(lower)")
        }
    }
}

@Test func everyReasonTogetherYieldsDeviceBootThenEachNextWhenTheHigherIsRemoved() {
    var context = allowedContext()
    for reason in PasswordReason.policyOrder where reason != .counterInconsistent { trigger(reason, in: &context) }
    #expect(engine.evaluate(context) == .passwordRequired(.deviceBoot))
    context.rebootDetected = false
    #expect(engine.evaluate(context) == .passwordRequired(.clockInconsistent))
    context.monotonicElapsedSinceStrongAuthentication = nil
    #expect(engine.evaluate(context) == .passwordRequired(.passwordChanged))
    context.passwordChangedAt = nil
    #expect(engine.evaluate(context) == .passwordRequired(.lockout))
    context.failedBiometricAttempts = 0
    #expect(engine.evaluate(context) == .passwordRequired(.timeoutExceeded))
    context.lastStrongAuthenticationAt = context.now.adding(.seconds(-60))
    #expect(engine.evaluate(context) == .passwordRequired(.biometricRevoked))
    context.biometricSetChanged = false
    #expect(engine.evaluate(context) == .passwordRequired(.firstUnlock))
    context.biometricsEnabled = true
    #expect(engine.evaluate(context) == .biometricAllowed)
}

@Test func firstUnlockAfterInstallRequiresThePasswordEvenWhenEnabled() {
    let context = UnlockContext(now: startTime, lastStrongAuthenticationAt: nil, biometricsEnabled: true)
    #expect(engine.evaluate(context) == .passwordRequired(.firstUnlock))
}

@Test func lockoutStartsAtTheThirdFailedAttempt() {
    var context = allowedContext()
    context.failedBiometricAttempts = 2
    #expect(engine.evaluate(context) == .biometricAllowed)
    context.failedBiometricAttempts = 3
    #expect(engine.evaluate(context) == .passwordRequired(.lockout))
    context.failedBiometricAttempts = 9
    #expect(engine.evaluate(context) == .passwordRequired(.lockout))
}

@Test func aNegativeCounterIsInconsistent() {
    var context = allowedContext()
    context.failedBiometricAttempts = -1
    #expect(engine.evaluate(context) == .passwordRequired(.counterInconsistent))
}

@Test func timeoutIsExceededOnlyAfterMoreThanThirtyMinutes() {
    var context = allowedContext()
    context.lastStrongAuthenticationAt = startTime.adding(.seconds(-30 * 60))
    #expect(engine.evaluate(context) == .biometricAllowed)
    context.lastStrongAuthenticationAt = startTime.adding(.milliseconds(-(30 * 60 * 1000 + 1)))
    #expect(engine.evaluate(context) == .passwordRequired(.timeoutExceeded))
}

@Test func timeoutUsesTheMonotonicMeasureWhenItIsLonger() {
    var settings = UnlockPolicySettings()
    settings.clockDriftTolerance = .seconds(3600)
    var context = allowedContext()
    context.monotonicElapsedSinceStrongAuthentication = .seconds(31 * 60)
    #expect(UnlockPolicyEngine(settings: settings).evaluate(context) == .passwordRequired(.timeoutExceeded))
}

@Test func passwordChangeCountsWithinTheWindowUntilThePasswordIsEnteredAgain() {
    var context = allowedContext()
    context.lastStrongAuthenticationAt = startTime.adding(.seconds(-25 * 3600))
    context.monotonicElapsedSinceStrongAuthentication = nil
    context.passwordChangedAt = startTime.adding(.seconds(-24 * 3600))
    var settings = UnlockPolicySettings()
    settings.strongAuthenticationTimeout = .seconds(48 * 3600)
    let engine = UnlockPolicyEngine(settings: settings)
    #expect(engine.evaluate(context) == .passwordRequired(.passwordChanged), "exactly at the window's edge")
    context.passwordChangedAt = startTime.adding(.milliseconds(-(24 * 3600 * 1000 + 1)))
    #expect(engine.evaluate(context) == .biometricAllowed, "older than the window")
    context.passwordChangedAt = startTime.adding(.seconds(-3600))
    context.lastStrongAuthenticationAt = startTime.adding(.seconds(-60))
    #expect(engine.evaluate(context) == .biometricAllowed, "the new password was entered after the change")
}

@Test func aClockBehindTheLastStrongAuthenticationFailsSafe() {
    var context = allowedContext()
    context.lastStrongAuthenticationAt = startTime.adding(.milliseconds(1))
    #expect(!engine.isClockConsistent(context))
    #expect(engine.evaluate(context) == .passwordRequired(.clockInconsistent))
}

@Test func aClockImplausiblyFarAheadFailsSafe() {
    var context = allowedContext()
    context.lastStrongAuthenticationAt = startTime.adding(.seconds(-400 * 24 * 3600))
    #expect(engine.evaluate(context) == .passwordRequired(.timeoutExceeded), "400 days is still plausible")
    context.lastStrongAuthenticationAt = startTime.adding(.milliseconds(-(400 * 24 * 3600 * 1000 + 1)))
    #expect(engine.evaluate(context) == .passwordRequired(.clockInconsistent))
}

@Test func aWallClockThatDisagreesWithTheMonotonicClockFailsSafe() {
    var context = allowedContext()
    context.monotonicElapsedSinceStrongAuthentication = .seconds(120 + 300)
    #expect(engine.evaluate(context) == .biometricAllowed, "5 minutes of drift are tolerated")
    context.monotonicElapsedSinceStrongAuthentication = .milliseconds(120_000 + 300_001)
    #expect(engine.evaluate(context) == .passwordRequired(.clockInconsistent), "wall clock set back")
    context.monotonicElapsedSinceStrongAuthentication = .zero
    context.lastStrongAuthenticationAt = startTime.adding(.seconds(-301))
    #expect(engine.evaluate(context) == .passwordRequired(.clockInconsistent), "wall clock moved ahead")
}

@Test func aPasswordChangeInTheFutureOrATimeOutsideTheFormatFailsSafe() {
    var context = allowedContext()
    context.passwordChangedAt = startTime.adding(.seconds(1))
    #expect(engine.evaluate(context) == .passwordRequired(.clockInconsistent))
    let outside = UnlockContext(
        now: AuditTimestamp(millisecondsSinceEpoch: -1),
        lastStrongAuthenticationAt: nil
    )
    #expect(engine.evaluate(outside) == .passwordRequired(.clockInconsistent))
}

@Test func thresholdsAreSettings() {
    var settings = UnlockPolicySettings()
    settings.maxBiometricAttempts = 5
    settings.strongAuthenticationTimeout = .seconds(5 * 60)
    let engine = UnlockPolicyEngine(settings: settings)
    var context = allowedContext()
    context.failedBiometricAttempts = 4
    #expect(engine.evaluate(context) == .biometricAllowed)
    context.lastStrongAuthenticationAt = startTime.adding(.seconds(-6 * 60))
    #expect(engine.evaluate(context) == .passwordRequired(.timeoutExceeded))
}

@Test func defaultSettingsAreTheDocumentedOnes() {
    let settings = UnlockPolicySettings()
    #expect(settings.maxBiometricAttempts == 3)
    #expect(settings.strongAuthenticationTimeout == .seconds(1800))
    #expect(settings.passwordChangeWindow == .seconds(86_400))
    #expect(settings.clockDriftTolerance == .seconds(300))
    #expect(settings.maximumPlausibleClockAdvance == .seconds(400 * 86_400))
}

@Test func faultReasonsCarryTheirErrorCodes() {
    #expect(PasswordReason.clockInconsistent.errorCode == .inconsistentClock)
    #expect(PasswordReason.counterInconsistent.errorCode == .inconsistentCounter)
    #expect(PasswordReason.biometricRevoked.errorCode == .biometricSetChanged)
    #expect(PasswordReason.promptCancelled.errorCode == .promptCancelled)
    #expect(PasswordReason.biometricUnavailable.errorCode == .unavailable)
    #expect(PasswordReason.deviceBoot.errorCode == nil)
    #expect(PasswordReason.lockout.errorCode == nil)
}
