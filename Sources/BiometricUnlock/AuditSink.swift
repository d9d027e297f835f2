public import AuditChain

/// Where the unlock flow's audit events go; the audit log store implements it.
///
/// Delivery is at least once: an event whose `record` threw is offered again on a later step, with the same
/// `idempotencyKey`, so an implementation that stored it before failing must de-duplicate on that key.
public protocol AuditSink: Sendable {
    /// Appends one event; throws when the backend cannot take it now (the shell keeps it for retry).
    func record(_ event: AuditEvent) async throws
}
