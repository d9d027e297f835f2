public import BiometricUnlock
/// What an ``UnlockSimulator`` run did.
public struct UnlockSimulationSummary: Sendable, Hashable {
    /// The seed of the run.
    public var seed: UInt64
    /// Simulated users (one device each).
    public var users: Int
    /// Sessions per user.
    public var sessionsPerUser: Int
    /// Sessions run in total (`users × sessionsPerUser`, fewer if the run stopped at an audit failure).
    public var sessions = 0
    /// Events the sink took, by catalogue type.
    public var eventCounts: [String: Int] = [:]
    /// Unlocks by a biometric (`BIOMETRIC_AUTH_SUCCESS`).
    public var biometricUnlocks = 0
    /// Unlocks by the password.
    public var passwordUnlocks = 0
    /// Wrong passwords typed (at the prompt or when enabling).
    public var rejectedPasswords = 0
    /// Audit failures the controllers reported (ERR-107-090), in order.
    public var auditFailures: [BiometricUnlockError] = []
    /// Events created but never taken by the sink (still pending at the end, or dropped).
    public var undeliveredEvents = 0

    /// Creates an empty summary.
    public init(seed: UInt64, users: Int, sessionsPerUser: Int) {
        self.seed = seed
        self.users = users
        self.sessionsPerUser = sessionsPerUser
    }

    /// Events the sink took, all types.
    public var totalEvents: Int { eventCounts.values.reduce(0, +) }
    /// Whether every event reached the sink.
    public var isComplete: Bool { auditFailures.isEmpty && undeliveredEvents == 0 }
}
