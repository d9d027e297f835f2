import Foundation

extension AuditTimestamp {
    /// The system's wall clock, truncated to milliseconds.
    public static func now() -> AuditTimestamp {
        AuditTimestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
