/// Namespace of the durable log store and delivery queue (built in a later step).
public enum AuditQueue {
    /// Version of the on-disk store layout this module writes.
    public static let storeVersion = 1
}
