public import AuditChain

/// An event of the built-in catalogue described by its type name and attributes (``UnlockAuditEvent``,
/// ``LockScreenAuditEvent``); ``auditEvent(occurredAt:userId:deviceId:idempotencyKey:)`` makes the complete event.
public protocol CatalogueEventDescription: Sendable {
    /// The catalogue type, e.g. `BIOMETRIC_AUTH_SUCCESS`.
    var typeName: String { get }
    /// The attributes, as the catalogue describes them; never a secret.
    var attributes: [String: JSONValue] { get }
}

extension CatalogueEventDescription {
    /// The complete event; `occurredAt` is clamped to the times the format can write (docs/FORMAT.md 8.1).
    public func auditEvent(
        occurredAt: AuditTimestamp,
        userId: String,
        deviceId: String,
        idempotencyKey: String
    ) -> AuditEvent {
        AuditEvent(
            type: typeName,
            occurredAt: min(max(occurredAt, .minimum), .maximum),
            userId: userId,
            deviceId: deviceId,
            attributes: attributes,
            idempotencyKey: idempotencyKey
        )
    }
}
