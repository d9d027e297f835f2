import Foundation

/// A temporary directory, removed when the value is released.
package final class TemporaryDirectory: Sendable {
    /// The directory.
    package let path: String

    /// Creates `$TMPDIR/<prefix>-<UUID>`.
    package init(prefix: String = "audit-test") throws {
        path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
