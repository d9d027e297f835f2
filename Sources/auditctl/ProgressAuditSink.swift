import AuditChain
import BiometricUnlock

/// An ``AuditSink`` that passes every event on to another and reports the simulation's progress.
///
/// The simulator runs its sessions round by round, one device (and user) after the other, so a change of user
/// between two events marks a finished session. With a single user there is no such mark: progress counts events
/// then, with no total.
actor ProgressAuditSink: AuditSink {
    private let base: any AuditSink
    private let progress: ProgressReporter
    private let countsSessions: Bool
    private var lastUser: String?
    private var sessions = 0
    private var events = 0

    /// Wraps `base`; `users` is the simulation's number of users (one device each).
    init(_ base: any AuditSink, users: Int, sessionsPerUser: Int, json: Bool) {
        self.base = base
        countsSessions = users > 1
        progress =
            countsSessions
            ? ProgressReporter("simulate", unit: "sessions", total: users * sessionsPerUser, json: json)
            : ProgressReporter("simulate", unit: "events", total: nil, json: json)
    }

    func record(_ event: AuditEvent) async throws {
        try await base.record(event)
        events += 1
        if let lastUser, lastUser != event.userId { sessions += 1 }
        lastUser = event.userId
        progress.update(countsSessions ? sessions : events)
    }

    /// Clears the progress line.
    func finish() { progress.finish() }
}
