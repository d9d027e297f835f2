/// What ``UnlockStateMachine`` asks the shell to do.
public enum UnlockAction: Sendable, Hashable {
    /// Gather an ``UnlockObservation`` and feed it back as ``UnlockInput/observed(_:)``.
    case observe
    /// Show the biometric prompt, release K_bio, open the envelope; feed back
    /// ``UnlockInput/biometricCompleted(_:)``.
    case promptBiometric
    /// Ask the user for the password.
    case requestPassword(PasswordReason)
    /// Append an audit event.
    case emit(UnlockAuditEvent)
    /// Delete K_bio and the envelope.
    case purgeArtefacts
    /// Tell the app to drop the session secret it holds.
    case discardSession
    /// Report an error to the caller.
    case report(BiometricUnlockError)
}

/// One change of state.
public struct UnlockTransition: Sendable, Hashable, CustomStringConvertible {
    /// The state before.
    public var from: UnlockState
    /// The state after.
    public var to: UnlockState

    /// Creates a transition.
    public init(from: UnlockState, to: UnlockState) {
        self.from = from
        self.to = to
    }

    /// `FROM -> TO`.
    public var description: String { "\(from) -> \(to)" }
}

/// What one input did: the transitions taken, the actions to perform, and whether the state accepted it.
public struct UnlockDecision: Sendable, Hashable {
    /// The transitions, in order (several when a state passes straight through, e.g. a third failure).
    public var transitions: [UnlockTransition] = []
    /// The actions, in the order to perform them.
    public var actions: [UnlockAction] = []
    /// False when the input means nothing in the current state and was ignored.
    public var inputAccepted = true

    /// Creates an empty decision.
    public init() {}

    /// The events among the actions.
    public var events: [UnlockAuditEvent] {
        actions.compactMap {
            if case .emit(let event) = $0 { return event }
            return nil
        }
    }
}
