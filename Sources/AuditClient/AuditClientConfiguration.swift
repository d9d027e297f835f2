public import AuditChain
import Foundation

/// The client's settings; every member but the endpoint has a default.
public struct AuditClientConfiguration: Sendable {
    /// Where the agent's ingest API listens.
    public enum Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// The agent's unix socket (`<stateDirectory>/ingest.sock` by default).
        case unixSocket(String)
        /// The agent's loopback TCP listener: host `127.0.0.1`, `::1` or `localhost` (the ingest API has no TLS
        /// and no authentication, so the client refuses any other host).
        case loopback(host: String, port: Int)

        /// The socket path or `host:port`.
        public var description: String {
            switch self {
            case .unixSocket(let path): path
            case .loopback(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            }
        }
    }

    /// Where the agent listens.
    public var endpoint: Endpoint
    /// Most events the buffer holds (waiting for the agent); past it the oldest routine event is dropped first.
    public var capacity = 1000
    /// A file that keeps the buffer across restarts of the producer (mode 0600, refused if group or others can read
    /// it; format in docs/CLIENT.md); nil keeps the buffer in memory only.
    public var bufferFile: String?
    /// Most events in one request (one commit on the agent).
    public var maxBatch = 256
    /// The waits between retries while the agent is unavailable: the n-th consecutive failure waits the n-th
    /// duration, the last one repeating (the agent's schedule: 1 s, 5 s, 30 s, 1 min, 5 min).
    public var backoff: [Duration] = [.seconds(1), .seconds(5), .seconds(30), .seconds(60), .seconds(300)]
    /// Deadline of one request to the agent (connection, commit and answer).
    public var requestTimeout: Duration = .seconds(30)
    /// The catalogue that gives each event type its priority (which are dropped first); types it does not know
    /// count as critical. It does not validate: the agent does, with its own catalogue.
    public var catalogue: EventCatalogue = .builtIn
    /// The `userId` of the client's `AUDIT_EVENTS_DROPPED` reports.
    public var reportUserId = "audit-client"
    /// The `deviceId` of the client's `AUDIT_EVENTS_DROPPED` reports; the host name by default.
    public var reportDeviceId = ProcessInfo.processInfo.hostName

    /// The defaults, for the agent at `endpoint`.
    public init(endpoint: Endpoint) {
        self.endpoint = endpoint
    }

    /// The defaults, for the agent's unix socket at `socketPath`.
    public init(socketPath: String) {
        self.init(endpoint: .unixSocket(socketPath))
    }

    /// Checks the settings.
    /// - Throws: ``AuditClientError`` with code ``AuditClientError/Code/invalidConfiguration``.
    public func validate() throws(AuditClientError) {
        func invalid(_ message: String) -> AuditClientError { AuditClientError(.invalidConfiguration, message) }
        switch endpoint {
        case .unixSocket(let path):
            guard !path.isEmpty, path.utf8.count < 108 else {
                throw invalid("the socket path must be 1 to 107 bytes long (got \(path.utf8.count))")
            }
        case .loopback(let host, let port):
            guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
                throw invalid(
                    "the agent's TCP ingest has no TLS and no authentication: use 127.0.0.1 or ::1, not \(host)"
                )
            }
            guard (1...65535).contains(port) else { throw invalid("the port must be 1...65535 (got \(port))") }
        }
        guard (1...1_000_000).contains(capacity) else {
            throw invalid("the buffer capacity must be 1...1000000 (got \(capacity))")
        }
        guard (1...10_000).contains(maxBatch) else { throw invalid("maxBatch must be 1...10000 (got \(maxBatch))") }
        guard !backoff.isEmpty, backoff.allSatisfy({ $0 >= .zero }) else {
            throw invalid("the backoff schedule needs at least one duration, none negative")
        }
        guard requestTimeout > .zero else { throw invalid("the request timeout must be positive") }
        guard !reportUserId.isEmpty, !reportDeviceId.isEmpty else {
            throw invalid("the drop reports' userId and deviceId must not be empty")
        }
    }

    /// The wait after the `failures`-th consecutive failure (1-based); the schedule's last entry repeats.
    public func backoff(afterFailures failures: Int) -> Duration {
        guard let last = backoff.last else { return .seconds(1) }
        let index = failures - 1
        return backoff.indices.contains(index) ? backoff[index] : last
    }
}
