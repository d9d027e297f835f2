public import AuditChain

/// An audit event the unlock flow emits, before the shell stamps it with identity, time and idempotency key.
///
/// Each case is a built-in catalogue type with exactly its declared attributes; none carries a secret.
public enum UnlockAuditEvent: CatalogueEventDescription, Hashable {
    /// `BIOMETRIC_ENABLED {biometryType}`.
    case biometricEnabled(biometryType: String)
    /// `BIOMETRIC_DISABLED {reason}`.
    case biometricDisabled(reason: DisableReason)
    /// `BIOMETRIC_AUTH_SUCCESS {unlockDurationMs}`: prompt to opened envelope, by the monotonic clock.
    case biometricAuthSuccess(unlockDurationMs: Int64)
    /// `BIOMETRIC_AUTH_FAILURE {attemptCount, errorCode}`.
    case biometricAuthFailure(attemptCount: Int, errorCode: BiometricUnlockError.Code)
    /// `BIOMETRIC_REVOKED_SYSTEM_CHANGE {}`.
    case biometricRevokedSystemChange
    /// `PASSWORD_AUTH_FALLBACK {reason}`.
    case passwordAuthFallback(reason: PasswordReason)
    /// `PASSWORD_AUTH_SUCCESS {attemptCount, reason}`: the attempt's number since the last accepted password.
    case passwordAuthSuccess(attemptCount: Int, reason: PasswordAttemptReason)
    /// `PASSWORD_AUTH_FAILURE {attemptCount, reason, errorCode, retryAfterMs?}`: ERR-107-010 for a wrong password,
    /// ERR-107-011 with `retryAfterMs` for an attempt refused unchecked while attempts are throttled.
    case passwordAuthFailure(
        attemptCount: Int,
        reason: PasswordAttemptReason,
        errorCode: BiometricUnlockError.Code,
        retryAfterMs: Int64? = nil
    )
    /// `PASSWORD_ATTEMPTS_THROTTLED {failedAttempts, lockoutMs, reason}`: a wrong password started a lockout.
    case passwordAttemptsThrottled(failedAttempts: Int, lockoutMs: Int64, reason: PasswordAttemptReason)

    /// Longest `biometryType` the catalogue accepts, in UTF-8 bytes.
    public static let maxBiometryTypeBytes = 64

    /// The catalogue type name.
    public var typeName: String {
        switch self {
        case .biometricEnabled: "BIOMETRIC_ENABLED"
        case .biometricDisabled: "BIOMETRIC_DISABLED"
        case .biometricAuthSuccess: "BIOMETRIC_AUTH_SUCCESS"
        case .biometricAuthFailure: "BIOMETRIC_AUTH_FAILURE"
        case .biometricRevokedSystemChange: "BIOMETRIC_REVOKED_SYSTEM_CHANGE"
        case .passwordAuthFallback: "PASSWORD_AUTH_FALLBACK"
        case .passwordAuthSuccess: "PASSWORD_AUTH_SUCCESS"
        case .passwordAuthFailure: "PASSWORD_AUTH_FAILURE"
        case .passwordAttemptsThrottled: "PASSWORD_ATTEMPTS_THROTTLED"
        }
    }

    /// The attributes, exactly those the catalogue declares, with values clamped into their declared ranges.
    public var attributes: [String: JSONValue] {
        switch self {
        case .biometricEnabled(let biometryType):
            ["biometryType": .string(Self.sanitizedBiometryType(biometryType))]
        case .biometricDisabled(let reason):
            ["reason": .string(reason.rawValue)]
        case .biometricAuthSuccess(let unlockDurationMs):
            ["unlockDurationMs": .integer(min(max(0, unlockDurationMs), JSONValue.maxSafeInteger))]
        case .biometricAuthFailure(let attemptCount, let errorCode):
            [
                "attemptCount": Self.count(attemptCount),
                "errorCode": .string(errorCode.identifier),
            ]
        case .biometricRevokedSystemChange:
            [:]
        case .passwordAuthFallback(let reason):
            ["reason": .string(reason.rawValue)]
        case .passwordAuthSuccess(let attemptCount, let reason):
            ["attemptCount": Self.count(attemptCount), "reason": .string(reason.rawValue)]
        case .passwordAuthFailure(let attemptCount, let reason, let errorCode, let retryAfterMs):
            Self.failureAttributes(attemptCount, reason, errorCode, retryAfterMs)
        case .passwordAttemptsThrottled(let failedAttempts, let lockoutMs, let reason):
            [
                "failedAttempts": Self.count(failedAttempts),
                "lockoutMs": .integer(min(max(1, lockoutMs), JSONValue.maxSafeInteger)),
                "reason": .string(reason.rawValue),
            ]
        }
    }

    /// A count clamped into 1 ... `Int32.max` (the catalogue's minimum is 1).
    private static func count(_ value: Int) -> JSONValue {
        .integer(Int64(min(max(1, value), Int(Int32.max))))
    }

    /// The attributes of `PASSWORD_AUTH_FAILURE`; `retryAfterMs` only when given, clamped to 0 ... 2^53 - 1.
    private static func failureAttributes(
        _ attemptCount: Int,
        _ reason: PasswordAttemptReason,
        _ errorCode: BiometricUnlockError.Code,
        _ retryAfterMs: Int64?
    ) -> [String: JSONValue] {
        var attributes: [String: JSONValue] = [
            "attemptCount": count(attemptCount),
            "reason": .string(reason.rawValue),
            "errorCode": .string(errorCode.identifier),
        ]
        if let retryAfterMs {
            attributes["retryAfterMs"] = .integer(min(max(0, retryAfterMs), JSONValue.maxSafeInteger))
        }
        return attributes
    }

    /// A platform's biometry name cut to 1 ... 64 UTF-8 bytes at a character boundary (`unknown` when empty).
    static func sanitizedBiometryType(_ name: String) -> String {
        guard !name.isEmpty else { return "unknown" }
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            guard bytes + size <= maxBiometryTypeBytes else { break }
            result.append(character)
            bytes += size
        }
        return result.isEmpty ? "unknown" : result
    }
}
