/// A biometric unlock operation that failed: the source's `ERR-107-xxx` code, what went wrong and what to do.
public struct BiometricUnlockError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure, each with its stable identifier from the source specification.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The stable identifier, e.g. `ERR-107-030`.
        public let identifier: String

        init(_ identifier: String) { self.identifier = identifier }

        /// `ERR-107-001`: biometric unlock cannot be used (no sensor, nothing enrolled, artefacts unreadable).
        public static let unavailable = Code("ERR-107-001")
        /// `ERR-107-010`: the password was not accepted.
        public static let badPassword = Code("ERR-107-010")
        /// `ERR-107-011`: too many wrong passwords in a row; the attempt was refused without checking the password
        /// until the lockout ends (docs/BIOMETRIC.md, "Password attempts and throttling").
        public static let passwordThrottled = Code("ERR-107-011")
        /// `ERR-107-020`: the secure key store refused a write, after the configured retries.
        public static let keyStoreWriteFailed = Code("ERR-107-020")
        /// `ERR-107-030`: the biometric did not match.
        public static let recognitionFailed = Code("ERR-107-030")
        /// `ERR-107-031`: the user cancelled the biometric prompt.
        public static let promptCancelled = Code("ERR-107-031")
        /// `ERR-107-050`: the failed-attempt counter could not be read or is impossible; the password is forced
        /// and the counter reset.
        public static let inconsistentCounter = Code("ERR-107-050")
        /// `ERR-107-060`: the enrolled biometric set changed, so K_bio was invalidated and biometric unlock revoked.
        public static let biometricSetChanged = Code("ERR-107-060")
        /// `ERR-107-070`: the wall clock is behind the last strong authentication or implausibly far ahead.
        public static let inconsistentClock = Code("ERR-107-070")
        /// `ERR-107-090`: the audit sink did not take an event (it is kept for retry unless reported dropped).
        public static let auditUnavailable = Code("ERR-107-090")

        /// Every code, in identifier order.
        public static let all: [Code] = [
            .unavailable, .badPassword, .passwordThrottled, .keyStoreWriteFailed, .recognitionFailed, .promptCancelled,
            .inconsistentCounter, .biometricSetChanged, .inconsistentClock, .auditUnavailable,
        ]

        /// The stable identifier.
        public var description: String { identifier }
    }

    /// What went wrong.
    public var code: Code
    /// Details: what happened and what the caller or user should do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `ERR-107-xxx: message`.
    public var description: String { "\(code): \(message)" }
}
