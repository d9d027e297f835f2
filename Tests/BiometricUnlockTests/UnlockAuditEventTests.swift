import AuditChain
import Testing

@testable import BiometricUnlock

private let allKinds: [UnlockAuditEvent] =
    [
        .biometricEnabled(biometryType: "faceID"),
        .biometricDisabled(reason: .userRequest),
        .biometricDisabled(reason: .artefactsUnreadable),
        .biometricAuthSuccess(unlockDurationMs: 840),
        .biometricAuthFailure(attemptCount: 2, errorCode: .recognitionFailed),
        .biometricRevokedSystemChange,
    ] + PasswordReason.allCases.map { .passwordAuthFallback(reason: $0) }
    + (PasswordReason.allCases.map(PasswordAttemptReason.required) + [.biometricEnrollment]).flatMap { reason in
        [
            UnlockAuditEvent.passwordAuthSuccess(attemptCount: 1, reason: reason),
            .passwordAuthFailure(attemptCount: 4, reason: reason, errorCode: .badPassword),
            .passwordAuthFailure(attemptCount: 6, reason: reason, errorCode: .passwordThrottled, retryAfterMs: 0),
            .passwordAttemptsThrottled(failedAttempts: 5, lockoutMs: 30_000, reason: reason),
        ]
    }

@Test func eachEventHasItsCatalogueTypeAndExactlyItsAttributes() {
    #expect(
        summaries(allKinds.prefix(6).map(stamped)) == [
            EventSummary(type: "BIOMETRIC_ENABLED", attributes: ["biometryType": "faceID"]),
            EventSummary(type: "BIOMETRIC_DISABLED", attributes: ["reason": "USER_REQUEST"]),
            EventSummary(type: "BIOMETRIC_DISABLED", attributes: ["reason": "ARTEFACTS_UNREADABLE"]),
            EventSummary(type: "BIOMETRIC_AUTH_SUCCESS", attributes: ["unlockDurationMs": 840]),
            EventSummary(type: "BIOMETRIC_AUTH_FAILURE", attributes: ["attemptCount": 2, "errorCode": "ERR-107-030"]),
            EventSummary(type: "BIOMETRIC_REVOKED_SYSTEM_CHANGE"),
        ]
    )
    #expect(
        stamped(.passwordAuthFallback(reason: .timeoutExceeded)).attributes == ["reason": "TIMEOUT_EXCEEDED"]
    )
}

@Test func passwordAttemptEventsCarryTheCountTheReasonAndNothingSecret() {
    #expect(
        summaries(
            [
                .passwordAuthSuccess(attemptCount: 3, reason: .required(.lockout)),
                .passwordAuthFailure(attemptCount: 2, reason: .required(.deviceBoot), errorCode: .badPassword),
                .passwordAuthFailure(
                    attemptCount: 6,
                    reason: .biometricEnrollment,
                    errorCode: .passwordThrottled,
                    retryAfterMs: 12_345
                ),
                .passwordAttemptsThrottled(failedAttempts: 5, lockoutMs: 30_000, reason: .required(.firstUnlock)),
            ].map(stamped)
        ) == [
            EventSummary(type: "PASSWORD_AUTH_SUCCESS", attributes: ["attemptCount": 3, "reason": "LOCKOUT"]),
            EventSummary(
                type: "PASSWORD_AUTH_FAILURE",
                attributes: ["attemptCount": 2, "reason": "DEVICE_BOOT", "errorCode": "ERR-107-010"]
            ),
            EventSummary(
                type: "PASSWORD_AUTH_FAILURE",
                attributes: [
                    "attemptCount": 6, "reason": "BIOMETRIC_ENROLLMENT", "errorCode": "ERR-107-011",
                    "retryAfterMs": 12_345,
                ]
            ),
            EventSummary(
                type: "PASSWORD_ATTEMPTS_THROTTLED",
                attributes: ["failedAttempts": 5, "lockoutMs": 30_000, "reason": "FIRST_UNLOCK"]
            ),
        ]
    )
    let clamped = [
        UnlockAuditEvent.passwordAuthSuccess(attemptCount: -3, reason: .biometricEnrollment),
        .passwordAuthFailure(
            attemptCount: .max,
            reason: .biometricEnrollment,
            errorCode: .badPassword,
            retryAfterMs: -1
        ),
        .passwordAttemptsThrottled(failedAttempts: 0, lockoutMs: .max, reason: .biometricEnrollment),
    ].map(stamped)
    #expect(clamped[0].attributes["attemptCount"] == 1)
    #expect(clamped[1].attributes["attemptCount"] == .integer(Int64(Int32.max)))
    #expect(clamped[1].attributes["retryAfterMs"] == 0)
    #expect(clamped[2].attributes["failedAttempts"] == 1)
    #expect(clamped[2].attributes["lockoutMs"] == .integer(JSONValue.maxSafeInteger))
    #expect(catalogueFailures(clamped).isEmpty)
}

@Test func everyEventKindPassesTheBuiltInCatalogue() {
    #expect(catalogueFailures(allKinds.map(stamped)).isEmpty)
}

@Test func stampingSetsIdentityTimeAndKey() {
    let event = UnlockAuditEvent.biometricRevokedSystemChange.auditEvent(
        occurredAt: startTime,
        userId: "u-1",
        deviceId: "d-1",
        idempotencyKey: "k-1"
    )
    #expect(event.userId == "u-1")
    #expect(event.deviceId == "d-1")
    #expect(event.occurredAt == startTime)
    #expect(event.idempotencyKey == "k-1")
}

@Test func outOfRangeValuesAreClampedIntoTheCatalogueRanges() {
    let clamped = [
        UnlockAuditEvent.biometricAuthSuccess(unlockDurationMs: -5),
        .biometricAuthFailure(attemptCount: 0, errorCode: .recognitionFailed),
        .biometricEnabled(biometryType: ""),
        .biometricEnabled(biometryType: String(repeating: "é", count: 40)),
    ].map(stamped)
    #expect(clamped[0].attributes["unlockDurationMs"] == 0)
    #expect(clamped[1].attributes["attemptCount"] == 1)
    #expect(clamped[2].attributes["biometryType"] == "unknown")
    #expect(clamped[3].attributes["biometryType"] == .string(String(repeating: "é", count: 32)))
    #expect(catalogueFailures(clamped).isEmpty)
    let early = UnlockAuditEvent.biometricRevokedSystemChange.auditEvent(
        occurredAt: AuditTimestamp(millisecondsSinceEpoch: -10),
        userId: "u",
        deviceId: "d",
        idempotencyKey: "k"
    )
    #expect(early.occurredAt == .minimum)
}

@Test func noAttributeNameCarriesASecret() {
    for kind in allKinds {
        for name in kind.attributes.keys {
            #expect(SecretAttributeRule.secretWord(in: name) == nil, "\(name)")
        }
    }
}

private func stamped(_ kind: UnlockAuditEvent) -> AuditEvent {
    kind.auditEvent(occurredAt: startTime, userId: Fixture.userId, deviceId: Fixture.deviceId, idempotencyKey: "k")
}
