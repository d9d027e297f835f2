public import BiometricUnlock
public import AuditChain
import Synchronization

/// An audit sink in memory, for tests and simulations; it can be made to fail.
public final class InMemoryAuditSink: AuditSink, Sendable {
    /// The error thrown while the sink is unavailable.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        /// Says the backend is down.
        public var description: String { "in-memory audit sink is unavailable" }
    }

    private struct Contents {
        var events: [AuditEvent] = []
        var isAvailable = true
        var attempts = 0
    }

    private let contents = Mutex(Contents())

    /// Creates an empty, available sink.
    public init() {}

    /// The events recorded, in order.
    public var events: [AuditEvent] { contents.withLock { $0.events } }
    /// Calls of ``record(_:)``, successful or not.
    public var attempts: Int { contents.withLock { $0.attempts } }
    /// Whether ``record(_:)`` succeeds.
    public var isAvailable: Bool {
        get { contents.withLock { $0.isAvailable } }
        set { contents.withLock { $0.isAvailable = newValue } }
    }

    /// Records the event, or throws ``Unavailable``.
    public func record(_ event: AuditEvent) async throws {
        try contents.withLock { (contents: inout Contents) throws(Unavailable) in
            contents.attempts += 1
            guard contents.isAvailable else { throw Unavailable() }
            contents.events.append(event)
        }
    }
}
