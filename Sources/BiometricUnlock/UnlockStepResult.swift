public import AuditChain

/// What one call into ``BiometricUnlockController`` did.
public struct UnlockStepResult: Sendable {
    /// The state at the end of the step.
    public var state: UnlockState
    /// The transitions taken, in order.
    public var transitions: [UnlockTransition] = []
    /// False when the request meant nothing in the state it arrived in and changed nothing.
    public var inputAccepted = true
    /// Why the password is required, when the step ended in `REQUIRE_PASSWORD` or `REVOKED`.
    public var passwordReason: PasswordReason?
    /// The session secret, when the step unlocked; the app takes it and wipes it after use.
    public var sessionSecret: SessionSecret?
    /// True when the app must drop the session secret it holds (the step locked or revoked an unlocked session).
    public var sessionDiscarded = false
    /// What went wrong, including ERR-107-090 when the audit sink failed; the unlock outcome is unaffected by it.
    public var errors: [BiometricUnlockError] = []
    /// The events this step created, in order (delivered or pending).
    public var emittedEvents: [AuditEvent] = []
    /// The events the sink took during this step, including older ones retried from the pending buffer.
    public var deliveredEvents: [AuditEvent] = []
    /// Events lost because the pending buffer overflowed (reported with ERR-107-090).
    public var droppedEvents: [AuditEvent] = []
    /// Events still waiting for the sink after this step.
    public var pendingEventCount = 0

    /// Creates a result.
    public init(state: UnlockState) {
        self.state = state
    }

    /// Whether the step ended unlocked.
    public var isUnlocked: Bool { state == .unlocked }
    /// The audit failure of this step, if the sink failed or an event was dropped.
    public var auditFailure: BiometricUnlockError? { errors.first { $0.code == .auditUnavailable } }
    /// The codes of ``errors``.
    public var errorCodes: [BiometricUnlockError.Code] { errors.map(\.code) }
}
