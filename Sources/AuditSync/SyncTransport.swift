public import Crypto
public import AuditWire

/// Sends a batch to the backend. The HTTP implementation is `HTTPSyncTransport` (AuditAgent); tests may script one.
public protocol SyncTransport: Sendable {
    /// Sends `batch` and reports what came back; never throws (a failure is an outcome).
    func send(_ batch: SyncBatch) async -> TransportOutcome

    /// Whether the backend accepts connections again (any HTTP answer counts). Used while the network is down to
    /// end a backoff pause as soon as the backend is back, without sending a batch into the void.
    func isReachable() async -> Bool

    /// The key the collector signs its receipts with, as it publishes it (`GET /v1/collector/key`,
    /// docs/PROTOCOL.md section 3); nil when it cannot be fetched. Read once, at first contact, to pin it.
    func collectorKey() async -> Curve25519.Signing.PublicKey?
}

extension SyncTransport {
    /// Transports that cannot probe say no: the pause runs its course.
    public func isReachable() async -> Bool { false }

    /// Transports that cannot fetch the key give none: a receipt then waits for a configured key.
    public func collectorKey() async -> Curve25519.Signing.PublicKey? { nil }
}
