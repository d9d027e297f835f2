public import BiometricUnlock
public import AuditChain
import Synchronization

/// A password verifier in memory, for tests and simulations. It yields a fixed session proof and secret.
public final class InMemoryPasswordVerifier: PasswordVerifier, Sendable {
    private struct Contents {
        var password: [UInt8]
        var sessionProof: [UInt8]
        var sessionSecret: [UInt8]
        var changedAt: AuditTimestamp?
        var verifications = 0
    }

    private let contents: Mutex<Contents>

    /// Creates a verifier for `password`.
    public init(password: [UInt8], sessionProof: [UInt8], sessionSecret: [UInt8], changedAt: AuditTimestamp? = nil) {
        contents = Mutex(
            Contents(password: password, sessionProof: sessionProof, sessionSecret: sessionSecret, changedAt: changedAt)
        )
    }

    /// Calls of ``verify(password:)``.
    public var verifications: Int { contents.withLock { $0.verifications } }

    /// Changes the password at `time`.
    public func changePassword(to password: [UInt8], at time: AuditTimestamp) {
        contents.withLock {
            $0.password = password
            $0.changedAt = time
        }
    }

    /// Accepts exactly the password (compared in constant time for equal lengths).
    public func verify(password: [UInt8]) async -> PasswordVerification {
        contents.withLock {
            $0.verifications += 1
            guard password.count == $0.password.count else { return .rejected }
            var difference: UInt8 = 0
            for (given, expected) in zip(password, $0.password) { difference |= given ^ expected }
            guard difference == 0 else { return .rejected }
            return .accepted(PasswordGrant(sessionProof: $0.sessionProof, sessionSecret: $0.sessionSecret))
        }
    }

    /// When the password last changed.
    public func passwordChangedAt() async -> AuditTimestamp? { contents.withLock { $0.changedAt } }
}
