public import AuditChain

/// Why the client could not deliver events: the agent is unavailable or answered something unexpected (the events are
/// kept and retried), the agent refused one event for good, or the client's own buffer file or settings are wrong.
///
/// A failed call may have delivered part of its events: ``committed`` lists those the agent committed (with their
/// seqs and idempotency keys) and ``kept`` those now in the client's buffer, which ``AuditClient/run()`` or
/// ``AuditClient/flush()`` deliver later. Do not send those again as new events (with new keys): the agent would
/// write them twice.
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
        /// The agent refused one event as invalid (400 naming its line): that event is not written and not retried;
        /// ``AuditClientError/line`` and ``AuditClientError/field`` say which and what is wrong.
        public static let refused = Code("refused")
        /// The agent refused one event because its idempotency key is held by another event (409 naming it): that
        /// event is not written and not retried.
        public static let conflict = Code("conflict")
        /// The agent answered neither a commit nor a refusal naming an event: a 200 whose body is not `{"seqs":
        /// [...]}` of the right length, another 2xx, a 3xx, a 4xx naming no event (404, 405, 401, ...), or 413 for
        /// a single event. Nothing is dropped: the events stay buffered and are retried with backoff (a retry is
        /// de-duplicated by the agent).
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
    /// The events of the failed call that the agent committed before it failed, with their seqs (in order).
    public var committed: [AuditClient.Delivery] = []
    /// The events of the failed call (`send`) now kept in the client's buffer, with the idempotency keys they
    /// were given; delivered by ``AuditClient/run()`` or ``AuditClient/flush()`` (or counted and reported if the
    /// buffer overflows). Empty for ``AuditClient/flush()``, whose events were in the buffer already.
    public var kept: [AuditEvent] = []

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether the events are kept and retried (the agent is unavailable or its answer was unreadable).
    public var isRetried: Bool { code == .agentUnavailable || code == .unexpectedAnswer }

    /// `code: message`, with the agent's code and the event's position when known, and what was committed and kept.
    public var description: String {
        var text = "\(code): \(message)"
        if let agentCode { text += " (agent code \(agentCode)" + (line.map { ", event \($0)" } ?? "") + ")" }
        if !committed.isEmpty { text += "; \(committed.count) event(s) committed before" }
        if isRetried || !kept.isEmpty { text += "; \(buffered) event(s) kept for retry" }
        return text
    }
}
