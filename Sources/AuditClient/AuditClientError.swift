/// Why the client could not deliver events: the agent is unavailable (`ERR-107-090`, the events are kept and retried),
/// the agent refused them (not retried), or the client's own buffer file or settings are wrong.
public struct AuditClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The stable identifier, e.g. `ERR-107-090`.
        public let identifier: String

        init(_ identifier: String) { self.identifier = identifier }

        /// `ERR-107-090` (the source's "backend down"): the agent could not be reached, did not answer, or answered
        /// that it cannot store events now (5xx, 408, 429). The events are kept in the client's buffer and retried
        /// with the same idempotency keys; a retry never makes a second entry.
        public static let agentUnavailable = Code("ERR-107-090")
        /// The agent refused the events as invalid (400, or another 4xx): nothing of the batch was written, nothing
        /// is retried; ``AuditClientError/line`` and ``AuditClientError/field`` say what is wrong.
        public static let refused = Code("refused")
        /// The agent refused the events because an idempotency key was used before for another event (409).
        public static let conflict = Code("conflict")
        /// The agent answered 200 with a body that is not `{"seqs": [...]}` of the right length; the events stay
        /// buffered (a retry is de-duplicated by the agent).
        public static let unexpectedAnswer = Code("unexpected-answer")
        /// The buffer file cannot be read or written, is readable by group or others, or is malformed.
        public static let bufferFile = Code("buffer-file")
        /// The configuration is invalid (an endpoint that is not loopback, a capacity below 1, ...).
        public static let invalidConfiguration = Code("invalid-configuration")

        /// The stable identifier.
        public var description: String { identifier }
    }

    /// What went wrong.
    public var code: Code
    /// Details: what happened and what to do; for a refusal, the agent's message.
    public var message: String
    /// The agent's error code (`missingField`, `http413`, ...), when it answered one.
    public var agentCode: String?
    /// The 1-based position in the batch of the event the agent refused, when it said.
    public var line: Int?
    /// The member the agent found wrong, when it said.
    public var field: String?
    /// How many events the client holds for retry after this failure.
    public var buffered = 0

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether the events are kept and retried (the agent is unavailable or its answer was unreadable).
    public var isRetried: Bool { code == .agentUnavailable || code == .unexpectedAnswer }

    /// `code: message`, with the agent's code and the event's position when known.
    public var description: String {
        var text = "\(code): \(message)"
        if let agentCode { text += " (agent code \(agentCode)" + (line.map { ", event \($0)" } ?? "") + ")" }
        if code == .agentUnavailable { text += "; \(buffered) event(s) kept for retry" }
        return text
    }
}
