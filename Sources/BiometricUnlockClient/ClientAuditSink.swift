public import AuditChain
public import AuditClient
public import BiometricUnlock

/// The unlock flow's ``AuditSink`` over an ``AuditClient``: events go to a running agent (docs/CLIENT.md).
///
/// With `batchSize` 1 (the default), every ``record(_:)`` sends its event and returns after the agent's commit. With
/// a larger batch, events wait in the client's buffer until `batchSize` of them are there, then go in one request
/// (one commit); call ``flush()`` at the end. When the agent is unavailable, `record` throws the client's
/// `ERR-107-090` error: the event is kept in the client's buffer for retry, and when the controller offers it again
/// (same idempotency key) it is not buffered twice.
public actor ClientAuditSink: AuditSink {
    /// The client events go through.
    public nonisolated let client: AuditClient
    private let batchSize: Int
    /// Events the agent committed, by type.
    public private(set) var written: [String: Int] = [:]

    /// A sink over `client`, sending `batchSize` events per request (1...``AuditClientConfiguration/maxBatch``).
    public init(client: AuditClient, batchSize: Int = 1) {
        self.client = client
        self.batchSize = min(max(1, batchSize), client.configuration.maxBatch)
    }

    /// Sends the event (or buffers it until a batch is full).
    /// - Throws: ``AuditClientError``: `ERR-107-090` when the agent is unavailable (the event is kept for retry), a
    ///   refusal when the agent refused it.
    public func record(_ event: AuditEvent) async throws {
        if batchSize == 1 {
            _ = try await client.send(event)
            written[event.type, default: 0] += 1
            return
        }
        try await client.enqueue(event)
        if await client.bufferedCount >= batchSize { try await flush() }
    }

    /// Sends every buffered event; returns how many the agent committed.
    /// - Throws: ``AuditClientError`` with code `ERR-107-090` when the agent is unavailable (they stay buffered);
    ///   what the agent committed before the failure is counted in ``written`` all the same.
    @discardableResult
    public func flush() async throws -> Int {
        let delivered: [AuditClient.Delivery]
        do {
            delivered = try await client.flush()
        } catch {
            count(error.committed)
            throw error
        }
        count(delivered)
        return delivered.count
    }

    private func count(_ delivered: [AuditClient.Delivery]) {
        for delivery in delivered { written[delivery.event.type, default: 0] += 1 }
    }
}
