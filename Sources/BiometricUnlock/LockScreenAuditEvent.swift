public import AuditChain

/// An audit event of the lock screens around the vault: the per-conversation PINs (``ConversationPins``) and the app
/// passcode lock (``PasscodeLock``), before it is stamped with identity, time and idempotency key.
///
/// Each case is a built-in catalogue type with exactly its declared attributes (docs/CATALOGUE.md); none carries a
/// PIN or a passcode: the types that produce them never see one.
public enum LockScreenAuditEvent: CatalogueEventDescription, Hashable {
    /// `CONVERSATION_PIN_SET {conversationId}`.
    case conversationPinSet(conversationId: String)
    /// `CONVERSATION_PIN_REMOVED {conversationId}`.
    case conversationPinRemoved(conversationId: String)
    /// `CONVERSATION_PIN_VERIFIED {conversationId, attemptCount}`.
    case conversationPinVerified(conversationId: String, attemptCount: Int)
    /// `CONVERSATION_PIN_FAILED {conversationId, attemptCount, retryAfterMs?}` (`retryAfterMs` when refused unchecked).
    case conversationPinFailed(conversationId: String, attemptCount: Int, retryAfterMs: Int64? = nil)
    /// `CONVERSATION_PIN_LOCKED_OUT {conversationId, failedAttempts, lockoutMs}`.
    case conversationPinLockedOut(conversationId: String, failedAttempts: Int, lockoutMs: Int64)
    /// `CONVERSATION_PINS_RESET {reason, conversationCount}`.
    case conversationPinsReset(reason: PinResetReason, conversationCount: Int)
    /// `PASSCODE_LOCK_ENABLED {gracePeriodSeconds}`.
    case passcodeLockEnabled(gracePeriodSeconds: Int64)
    /// `PASSCODE_LOCK_DISABLED {}`.
    case passcodeLockDisabled
    /// `PASSCODE_AUTH_SUCCESS {attemptCount}`.
    case passcodeAuthSuccess(attemptCount: Int)
    /// `PASSCODE_AUTH_FAILURE {attemptCount, retryAfterMs?}` (`retryAfterMs` when refused unchecked).
    case passcodeAuthFailure(attemptCount: Int, retryAfterMs: Int64? = nil)
    /// `PASSCODE_ATTEMPTS_THROTTLED {failedAttempts, lockoutMs}`.
    case passcodeAttemptsThrottled(failedAttempts: Int, lockoutMs: Int64)
    /// `FORGOT_PASSCODE_LOGOUT {}`.
    case forgotPasscodeLogout

    /// Longest `conversationId` the catalogue accepts, in UTF-8 bytes.
    public static let maxConversationIdBytes = 256

    /// The catalogue type name.
    public var typeName: String {
        switch self {
        case .conversationPinSet: "CONVERSATION_PIN_SET"
        case .conversationPinRemoved: "CONVERSATION_PIN_REMOVED"
        case .conversationPinVerified: "CONVERSATION_PIN_VERIFIED"
        case .conversationPinFailed: "CONVERSATION_PIN_FAILED"
        case .conversationPinLockedOut: "CONVERSATION_PIN_LOCKED_OUT"
        case .conversationPinsReset: "CONVERSATION_PINS_RESET"
        case .passcodeLockEnabled: "PASSCODE_LOCK_ENABLED"
        case .passcodeLockDisabled: "PASSCODE_LOCK_DISABLED"
        case .passcodeAuthSuccess: "PASSCODE_AUTH_SUCCESS"
        case .passcodeAuthFailure: "PASSCODE_AUTH_FAILURE"
        case .passcodeAttemptsThrottled: "PASSCODE_ATTEMPTS_THROTTLED"
        case .forgotPasscodeLogout: "FORGOT_PASSCODE_LOGOUT"
        }
    }

    /// The attributes, exactly those the catalogue declares, with values clamped into their declared ranges.
    public var attributes: [String: JSONValue] {
        switch self {
        case .conversationPinSet(let id), .conversationPinRemoved(let id):
            ["conversationId": Self.conversation(id)]
        case .conversationPinVerified(let id, let attemptCount):
            ["conversationId": Self.conversation(id), "attemptCount": Self.count(attemptCount)]
        case .conversationPinFailed(let id, let attemptCount, let retryAfterMs):
            Self.withRetry(
                ["conversationId": Self.conversation(id), "attemptCount": Self.count(attemptCount)],
                retryAfterMs
            )
        case .conversationPinLockedOut(let id, let failedAttempts, let lockoutMs):
            [
                "conversationId": Self.conversation(id), "failedAttempts": Self.count(failedAttempts),
                "lockoutMs": Self.clamped(lockoutMs, minimum: 1),
            ]
        case .conversationPinsReset(let reason, let conversationCount):
            ["reason": .string(reason.rawValue), "conversationCount": .integer(Int64(max(0, conversationCount)))]
        case .passcodeLockEnabled(let gracePeriodSeconds):
            ["gracePeriodSeconds": Self.clamped(gracePeriodSeconds, minimum: 0)]
        case .passcodeLockDisabled, .forgotPasscodeLogout:
            [:]
        case .passcodeAuthSuccess(let attemptCount):
            ["attemptCount": Self.count(attemptCount)]
        case .passcodeAuthFailure(let attemptCount, let retryAfterMs):
            Self.withRetry(["attemptCount": Self.count(attemptCount)], retryAfterMs)
        case .passcodeAttemptsThrottled(let failedAttempts, let lockoutMs):
            ["failedAttempts": Self.count(failedAttempts), "lockoutMs": Self.clamped(lockoutMs, minimum: 1)]
        }
    }

    /// A conversation id cut to 1 ... 256 UTF-8 bytes at a character boundary (`unknown` when empty).
    private static func conversation(_ id: String) -> JSONValue {
        var result = ""
        var bytes = 0
        for character in id {
            let size = character.utf8.count
            guard bytes + size <= maxConversationIdBytes else { break }
            result.append(character)
            bytes += size
        }
        return .string(result.isEmpty ? "unknown" : result)
    }

    /// A count clamped into 1 ... `Int32.max`.
    private static func count(_ value: Int) -> JSONValue { .integer(Int64(min(max(1, value), Int(Int32.max)))) }

    /// An integer clamped into `minimum` ... 2^53 - 1.
    private static func clamped(_ value: Int64, minimum: Int64) -> JSONValue {
        .integer(min(max(minimum, value), JSONValue.maxSafeInteger))
    }

    /// `attributes` with `retryAfterMs` when given.
    private static func withRetry(_ attributes: [String: JSONValue], _ retryAfterMs: Int64?) -> [String: JSONValue] {
        var attributes = attributes
        if let retryAfterMs { attributes["retryAfterMs"] = clamped(retryAfterMs, minimum: 0) }
        return attributes
    }
}

/// Why every conversation PIN was removed; the value of `CONVERSATION_PINS_RESET.reason` (a closed set).
public enum PinResetReason: String, Sendable, Hashable, CaseIterable {
    /// The user logged out (including "forgot passcode").
    case logout = "LOGOUT"
}

/// The outcome of one PIN or passcode attempt.
public struct LockScreenAttempt: Sendable, Hashable {
    /// Whether the secret was checked and right.
    public var accepted: Bool
    /// Milliseconds before an attempt is checked again, when this one was refused unchecked or started a lockout.
    public var retryAfterMs: Int64?
    /// The events to record, in order.
    public var events: [LockScreenAuditEvent]

    /// Creates an outcome.
    public init(accepted: Bool, retryAfterMs: Int64? = nil, events: [LockScreenAuditEvent]) {
        self.accepted = accepted
        self.retryAfterMs = retryAfterMs
        self.events = events
    }
}
