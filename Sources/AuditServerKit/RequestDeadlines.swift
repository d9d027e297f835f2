/// The deadline a connection is under, as its requests and responses go by (pure: the handler arms the timers).
///
/// - From the accept: the first request head within the header timeout.
/// - From a head: that request's body within the body timeout (bytes that trickle in do not extend it).
/// - While the server answers (the body is in, the response is not written): no deadline.
/// - From the end of the last response: the next request head within the idle timeout.
///
/// A connection is evictable (see ``ConnectionBook``) exactly when it waits for a request head.
struct RequestDeadlines: Equatable {
    /// What a deadline was waiting for.
    enum Expiry: String, Equatable, Sendable {
        case header, body, idle
    }

    /// What the handler must do with its timer.
    enum Action: Equatable {
        /// Replace any running timer by one that closes the connection after the duration.
        case arm(Duration, Expiry)
        /// Stop the running timer.
        case disarm
        /// Leave the timer as it is.
        case keep
    }

    /// The kinds of request part the handler sees.
    enum RequestPart {
        case head, body, end
    }

    let limits: ServerLimits
    /// Requests whose head arrived and whose response is not fully written.
    private(set) var inFlight = 0
    /// Whether a request's body is being received.
    private(set) var readingBody = false

    init(limits: ServerLimits) {
        self.limits = limits
    }

    /// Whether the connection waits for a request head (new, or idle between requests).
    var evictable: Bool { inFlight == 0 && !readingBody }

    /// The connection was accepted.
    func started() -> Action { .arm(limits.headerTimeout, .header) }

    /// A request part arrived.
    mutating func received(_ part: RequestPart) -> Action {
        switch part {
        case .head:
            inFlight += 1
            readingBody = true
            return .arm(limits.bodyTimeout, .body)
        case .body:
            return .keep
        case .end:
            readingBody = false
            // The server may have answered before the body ended (a 401, a 413): then it is idle now.
            return inFlight > 0 ? .disarm : .arm(limits.idleTimeout, .idle)
        }
    }

    /// A response was fully written.
    mutating func respondedOnce() -> Action {
        inFlight = max(0, inFlight - 1)
        guard evictable else { return .keep }
        return .arm(limits.idleTimeout, .idle)
    }
}
