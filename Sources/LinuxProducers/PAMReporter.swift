public import AuditChain
import AuditClient
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What `auditctl pam` does for one PAM line (docs/PRODUCERS.md): counts the attempt, builds the event and hands it
/// to the agent within a bound of time. It never fails the login: every outcome is a ``Result``, never an error.
public struct PAMReporter: Sendable {
    /// The settings.
    public struct Configuration: Sendable {
        /// The agent's ingest socket.
        public var socketPath: String
        /// The bound on the whole run (lock, count, send); past it the event is left in the buffer file, or dropped
        /// without one.
        public var timeout: Duration = .milliseconds(200)
        /// The client's buffer file: an event not delivered in time waits there and goes with the next run; nil
        /// drops it (reported on standard error).
        public var bufferFile: String?
        /// The file of attempt counts per user and service (``PAMAttemptTally``); nil counts every attempt as 1.
        public var attemptsFile: String?
        /// This host's device id (its host name by default).
        public var deviceId = HostName.current

        /// The defaults, for the agent at `socketPath`.
        public init(socketPath: String) {
            self.socketPath = socketPath
        }
    }

    /// What became of the event.
    public enum Result: Sendable, Hashable {
        /// The agent committed it (with everything the buffer file held before).
        case delivered(seq: UInt64)
        /// Not delivered in time: it waits in the buffer file.
        case buffered(reason: String)
        /// Neither delivered nor kept.
        case dropped(reason: String)
    }

    /// The settings.
    public let configuration: Configuration

    /// A reporter with these settings.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Counts, builds and sends the event of `request`; returns it with what became of it.
    public func report(_ request: PAMRequest) async -> (event: AuditEvent, result: Result) {
        let deadline = ContinuousClock.now + configuration.timeout
        let attempt = countAttempt(request, until: deadline)
        let event = request.event(
            attemptCount: attempt,
            deviceId: configuration.deviceId,
            occurredAt: .now(),
            idempotencyKey: UUID().uuidString.lowercased()
        )
        return (event, await deliver(event, until: deadline))
    }

    /// The attempt's number, from the attempts file under an exclusive lock (1 without a file, or when the lock is
    /// not had in half the bound).
    private func countAttempt(_ request: PAMRequest, until deadline: ContinuousClock.Instant) -> Int {
        guard let path = configuration.attemptsFile else { return 1 }
        let half = ContinuousClock.now + (deadline - ContinuousClock.now) / 2
        guard let file = LockedFile(path: path, until: half) else { return 1 }
        defer { file.unlock() }
        var tally = PAMAttemptTally(parsing: file.read(maxBytes: 1 << 20))
        let count = tally.record(request.outcome, key: request.attemptKey)
        file.replace(with: tally.encoded())
        return count
    }

    private func deliver(_ event: AuditEvent, until deadline: ContinuousClock.Instant) async -> Result {
        var settings = AuditClientConfiguration(socketPath: configuration.socketPath)
        settings.reportUserId = "pam"
        settings.reportDeviceId = configuration.deviceId
        // The buffer file is shared by every run: one at a time (a run that cannot have it in time sends alone).
        let lock = configuration.bufferFile.flatMap { LockedFile(path: $0 + ".lock", until: deadline) }
        defer { lock?.unlock() }
        if lock != nil { settings.bufferFile = configuration.bufferFile }
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            return .dropped(reason: "no time left in the bound of \(configuration.timeout)")
        }
        settings.requestTimeout = remaining
        let client: AuditClient
        do {
            client = try AuditClient(configuration: settings)
        } catch {
            return .dropped(reason: "\(error)")
        }
        if lock != nil {
            // Kept in the file first: whatever happens next, the next run sends it.
            do {
                try await client.enqueue(event)
            } catch {
                return .dropped(reason: "\(error)")
            }
            do {
                let delivered = try await client.flush()
                if let mine = delivered.first(where: { $0.event.idempotencyKey == event.idempotencyKey }) {
                    return .delivered(seq: mine.seq)
                }
                return .buffered(reason: "the agent did not commit it")
            } catch {
                return .buffered(reason: "\(error)")
            }
        }
        do {
            return .delivered(seq: try await client.send(event))
        } catch {
            return .dropped(reason: "\(error)")
        }
    }
}
