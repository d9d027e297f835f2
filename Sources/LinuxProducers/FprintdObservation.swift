/// Whose fingerprints an fprintd operation concerns, as the bus tells it.
public enum FprintdUser: Sendable, Hashable {
    /// The user named in the `Claim` call.
    case name(String)
    /// The claiming connection's uid (a `Claim` with an empty name means the caller), from fprintd's own
    /// `GetConnectionUnixUser` question to the bus.
    case uid(UInt32)
    /// An empty-name claim whose caller's uid the watcher did not see (it started after the claim).
    case unresolved
}

/// A fingerprint operation fprintd completed, for one user on one device: what the watcher turns into an event.
public struct FprintdObservation: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// An enrollment completed (`EnrollStatus` `enroll-completed`).
        case enrolled(finger: String?)
        /// Enrolled fingers were deleted (`DeleteEnrolledFingers2`, `DeleteEnrolledFingers` or
        /// `DeleteEnrolledFinger` answered without error); `finger` is set when one finger alone was deleted.
        case deleted(finger: String?)
        /// A verification matched (`VerifyStatus` `verify-match`), `durationMs` after its `VerifyStart`.
        case verified(finger: String?, durationMs: Int64)
        /// A verification ended without a match: `result` is fprintd's (`verify-no-match`, `verify-disconnected`,
        /// `verify-unknown-error`), `attempts` the failed scans of the claim so far (retries included).
        case verifyFailed(finger: String?, attempts: Int, result: String)
    }

    /// What happened.
    public var kind: Kind
    /// Whose fingerprints.
    public var user: FprintdUser
    /// fprintd's object path of the reader (`/net/reactivated/Fprint/Device/0`).
    public var devicePath: String
    /// When the bus saw the message that completed it (microseconds since the epoch), if busctl said.
    public var timestampMicros: Int64?

    /// Creates an observation.
    public init(kind: Kind, user: FprintdUser, devicePath: String, timestampMicros: Int64?) {
        self.kind = kind
        self.user = user
        self.devicePath = devicePath
        self.timestampMicros = timestampMicros
    }
}
