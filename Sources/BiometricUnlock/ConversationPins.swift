public import AuditChain

/// The per-conversation 4-digit PINs as audit state: which conversations have one, their wrong attempts in a row
/// and lockouts, and the reset at logout. Pure: it never sees a PIN.
///
/// The app keeps the PINs (hashed, in its secure storage) and checks them; it passes the check as a closure to
/// ``attempt(conversationId:at:monotonicElapsedSinceLockout:check:)``, which does not call it while the
/// conversation is locked out, so a refused attempt reveals nothing. Every call returns the events to record
/// (deliver them through the same ``AuditSink`` as the unlock flow). The throttle follows ``AttemptThrottle`` (by
/// default 5 wrong PINs lock the conversation's PIN out for 30 s, doubling up to 1 h); keep this value in the app's
/// secure storage so a relaunch does not reset it.
public struct ConversationPins: Sendable, Hashable {
    /// The anti-brute-force policy of each conversation's PIN.
    public var settings: AttemptThrottleSettings
    /// The conversations that have a PIN, with their throttles.
    public private(set) var throttles: [String: AttemptThrottle] = [:]

    /// Creates the state with no PIN.
    public init(settings: AttemptThrottleSettings = AttemptThrottleSettings()) {
        self.settings = settings
    }

    /// Whether `conversationId` has a PIN.
    public func hasPin(_ conversationId: String) -> Bool { throttles[conversationId] != nil }

    /// A PIN was set (or replaced) for `conversationId`: its count and lockout start over.
    public mutating func pinSet(conversationId: String) -> [LockScreenAuditEvent] {
        throttles[conversationId] = AttemptThrottle()
        return [.conversationPinSet(conversationId: conversationId)]
    }

    /// The PIN of `conversationId` was removed; nothing happens (and nothing is logged) if it had none.
    public mutating func pinRemoved(conversationId: String) -> [LockScreenAuditEvent] {
        guard throttles.removeValue(forKey: conversationId) != nil else { return [] }
        return [.conversationPinRemoved(conversationId: conversationId)]
    }

    /// One PIN attempt for `conversationId` at `now`.
    ///
    /// Refused unchecked (`check` not called) while the conversation is locked out: `CONVERSATION_PIN_FAILED` with
    /// `retryAfterMs`. Otherwise `check()` decides: `CONVERSATION_PIN_VERIFIED` (the count starts over) or
    /// `CONVERSATION_PIN_FAILED`, followed at the threshold by `CONVERSATION_PIN_LOCKED_OUT`. A conversation without
    /// a PIN accepts nothing and logs nothing.
    /// - Parameters:
    ///   - monotonicElapsedSinceLockout: the monotonic time since the lockout started, when the app measured it.
    ///   - check: compares the entered PIN with the stored one; the PIN never reaches this type.
    public mutating func attempt(
        conversationId: String,
        at now: AuditTimestamp,
        monotonicElapsedSinceLockout: Duration? = nil,
        check: () -> Bool
    ) -> LockScreenAttempt {
        guard var throttle = throttles[conversationId] else { return LockScreenAttempt(accepted: false, events: []) }
        defer { throttles[conversationId] = throttle }
        let result = throttle.attempt(
            at: now,
            monotonicElapsed: monotonicElapsedSinceLockout,
            settings: settings,
            check: check
        )
        switch result {
        case .refused(let attemptCount, let retryAfterMs):
            let event = LockScreenAuditEvent.conversationPinFailed(
                conversationId: conversationId,
                attemptCount: attemptCount,
                retryAfterMs: retryAfterMs
            )
            return LockScreenAttempt(accepted: false, retryAfterMs: retryAfterMs, events: [event])
        case .accepted(let attemptCount):
            let event = LockScreenAuditEvent.conversationPinVerified(
                conversationId: conversationId,
                attemptCount: attemptCount
            )
            return LockScreenAttempt(accepted: true, events: [event])
        case .failed(let attemptCount, let failedAttempts, let lockout):
            let failed = LockScreenAuditEvent.conversationPinFailed(
                conversationId: conversationId,
                attemptCount: attemptCount
            )
            guard let lockout else { return LockScreenAttempt(accepted: false, events: [failed]) }
            let lockedOut = LockScreenAuditEvent.conversationPinLockedOut(
                conversationId: conversationId,
                failedAttempts: failedAttempts,
                lockoutMs: lockout.durationMilliseconds
            )
            return LockScreenAttempt(
                accepted: false,
                retryAfterMs: lockout.durationMilliseconds,
                events: [failed, lockedOut]
            )
        }
    }

    /// Logout (including "forgot passcode"): every PIN is removed, with one `CONVERSATION_PINS_RESET {reason:
    /// LOGOUT, conversationCount}` (also when there were none, so the reset is on record).
    public mutating func logout() -> [LockScreenAuditEvent] {
        let count = throttles.count
        throttles = [:]
        return [.conversationPinsReset(reason: .logout, conversationCount: count)]
    }
}
