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

/// A temporary directory with a short path, `/tmp/<prefix>-<8 hex digits>` (unix socket paths are limited to about
/// 100 bytes), removed when released.
package final class ShortTemporaryDirectory: Sendable {
    /// The directory.
    package let path: String

    /// Creates `/tmp/<prefix>-<8 hex digits>`.
    package init(prefix: String) throws {
        path = "/tmp/\(prefix)-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    package func file(_ name: String) -> String { path + "/" + name }
}
