/// Sends a batch to the backend. The HTTP implementation is `HTTPSyncTransport` (AuditAgent); tests may script one.
public protocol SyncTransport: Sendable {
    /// Sends `batch` and reports what came back; never throws (a failure is an outcome).
    func send(_ batch: SyncBatch) async -> TransportOutcome

    /// Whether the backend accepts connections again (any HTTP answer counts). Used while the network is down to
    /// end a backoff pause as soon as the backend is back, without sending a batch into the void.
    func isReachable() async -> Bool
}

extension SyncTransport {
    /// Transports that cannot probe say no: the pause runs its course.
    public func isReachable() async -> Bool { false }
}
