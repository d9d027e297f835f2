public import AuditChain
public import BiometricUnlock
import Synchronization

/// An ``AuditSink`` that passes every event to another sink and counts, by type, the events that sink took.
///
/// The simulator's summary counts through it, so the events of a call that threw (a refused password when enabling
/// biometric unlock) are counted as well as those of a step result.
public final class CountingAuditSink: AuditSink, Sendable {
    private let inner: any AuditSink
    private let taken = Mutex<[String: Int]>([:])

    /// Creates a sink in front of `inner`.
    public init(wrapping inner: any AuditSink) {
        self.inner = inner
    }

    /// The events `inner` took, by catalogue type.
    public var counts: [String: Int] { taken.withLock { $0 } }

    /// Passes the event on; counts it when `inner` took it.
    public func record(_ event: AuditEvent) async throws {
        try await inner.record(event)
        taken.withLock { $0[event.type, default: 0] += 1 }
    }
}
