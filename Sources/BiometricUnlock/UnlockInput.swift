public import AuditChain

/// What can happen to the unlock flow; the inputs of ``UnlockStateMachine``.
///
/// The shell (``BiometricUnlockController``) creates the inputs that report a platform result (observation,
/// biometric outcome, verified password) only after performing the matching action, so a caller cannot forge them.
public enum UnlockInput: Sendable, Hashable {
    /// The app launched (state `STARTUP_CHECK`).
    case launched
    /// The facts gathered for the policy, answering ``UnlockAction/observe``.
    case observed(UnlockObservation)
    /// The result of a biometric unlock attempt, answering ``UnlockAction/promptBiometric``.
    case biometricCompleted(BiometricAttemptOutcome)
    /// The user asks for another biometric attempt (`BIOMETRIC_FAILED`).
    case retryBiometric
    /// The user chooses the password instead of the biometric.
    case usePassword
    /// The password verifier accepted the password.
    case passwordAccepted(at: AuditTimestamp, bootSessionID: String)
    /// The password verifier refused the password, checked at `at`; `forEnrollment` when it was given to enable
    /// biometric unlock (in `UNLOCKED`) rather than to unlock.
    case passwordRejected(at: AuditTimestamp, forEnrollment: Bool = false)
    /// A password attempt at `at` was refused unchecked: attempts are throttled for `retryAfterMs` more
    /// milliseconds (0: another attempt was being checked).
    case passwordRefused(at: AuditTimestamp, retryAfterMs: Int64, forEnrollment: Bool = false)
    /// The password verifier accepted the password given to enable biometric unlock (in `UNLOCKED`).
    case enrollmentPasswordAccepted
    /// The app went to the background.
    case background
    /// The user locked the app.
    case lock
    /// The inactivity timeout fired.
    case timeout
    /// The app came back to the foreground.
    case foreground
    /// The platform reported a change of the enrolled biometric set (K_bio is invalidated).
    case biometricSetChanged
    /// Biometric unlock was enabled after the password was verified at `at`.
    case biometricEnabled(biometryType: String, at: AuditTimestamp)
    /// Biometric unlock was disabled.
    case biometricDisabled(DisableReason)
}

/// The facts the shell gathers for the policy.
public struct UnlockObservation: Sendable, Hashable {
    /// The wall-clock time.
    public var now: AuditTimestamp
    /// The current boot session; differs from the recorded one after a reboot.
    public var bootSessionID: String
    /// When the password last changed, if known.
    public var passwordChangedAt: AuditTimestamp?
    /// Time since the last strong authentication by the monotonic clock, when this process measured it.
    public var monotonicElapsedSinceStrongAuthentication: Duration?
    /// The state of K_bio in the key store.
    public var keyStatus: BiometricKeyStatus

    /// Creates an observation.
    public init(
        now: AuditTimestamp,
        bootSessionID: String,
        passwordChangedAt: AuditTimestamp? = nil,
        monotonicElapsedSinceStrongAuthentication: Duration? = nil,
        keyStatus: BiometricKeyStatus
    ) {
        self.now = now
        self.bootSessionID = bootSessionID
        self.passwordChangedAt = passwordChangedAt
        self.monotonicElapsedSinceStrongAuthentication = monotonicElapsedSinceStrongAuthentication
        self.keyStatus = keyStatus
    }
}

/// The state of K_bio in the secure key store.
public enum BiometricKeyStatus: Sendable, Hashable {
    /// No K_bio: biometric unlock is not enabled.
    case notEnrolled
    /// K_bio is present and bound to the current biometric set.
    case enrolled
    /// K_bio was invalidated because the enrolled biometric set changed.
    case invalidatedByBiometricChange
}

/// The result of one biometric unlock attempt, as the shell performed it.
public enum BiometricAttemptOutcome: Sendable, Hashable {
    /// The biometric matched, K_bio was released and opened the envelope; `duration` by the monotonic clock.
    case unlocked(duration: Duration)
    /// The biometric did not match (ERR-107-030).
    case recognitionFailed
    /// The user cancelled the prompt (ERR-107-031).
    case cancelled
    /// The sensor is unavailable (ERR-107-001).
    case unavailable
    /// The key store reports K_bio invalidated by a biometric set change (ERR-107-060).
    case keyInvalidated
    /// K_bio or the envelope is missing, or the envelope does not open (ERR-107-001).
    case artefactsUnreadable
}

/// Why biometric unlock was disabled; the value of `BIOMETRIC_DISABLED.reason` (a closed set, so no free text
/// can carry a secret into the log).
public enum DisableReason: String, Sendable, Hashable, CaseIterable {
    /// The user turned biometric unlock off.
    case userRequest = "USER_REQUEST"
    /// K_bio or the envelope could not be used and was purged.
    case artefactsUnreadable = "ARTEFACTS_UNREADABLE"
}
