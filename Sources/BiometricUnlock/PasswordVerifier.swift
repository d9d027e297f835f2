public import AuditChain

/// Checks the account password (locally or with the server) and yields the session material.
public protocol PasswordVerifier: Sendable {
    /// Verifies a password; the callee must not keep `password`.
    func verify(password: [UInt8]) async -> PasswordVerification
    /// When the password last changed, if known (drives `PASSWORD_CHANGED`).
    func passwordChangedAt() async -> AuditTimestamp?
}

/// The verifier's answer.
public enum PasswordVerification: Sendable {
    /// The password is right.
    case accepted(PasswordGrant)
    /// The password is wrong.
    case rejected
}

/// What a verified password yields: the proof K_bio is derived from, and the secret the envelope protects.
public struct PasswordGrant: Sendable, CustomStringConvertible {
    /// Proof of this password session (the HKDF input of K_bio); never stored or logged.
    public var sessionProof: [UInt8]
    /// The secret the app needs once unlocked (e.g. the local database key); never logged.
    public var sessionSecret: [UInt8]

    /// Creates a grant.
    public init(sessionProof: [UInt8], sessionSecret: [UInt8]) {
        self.sessionProof = sessionProof
        self.sessionSecret = sessionSecret
    }

    /// Overwrites both buffers (see ``SecureWipe``).
    public mutating func wipe() {
        SecureWipe.wipe(&sessionProof)
        SecureWipe.wipe(&sessionSecret)
    }

    /// Redacted.
    public var description: String { "PasswordGrant(redacted)" }
}
