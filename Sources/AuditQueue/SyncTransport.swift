/// Sends a batch to the backend. The HTTP implementation is ``HTTPSyncTransport``; tests may script one.
public protocol SyncTransport: Sendable {
    /// Sends `batch` and reports what came back; never throws (a failure is an outcome).
    func send(_ batch: SyncBatch) async -> TransportOutcome
}
