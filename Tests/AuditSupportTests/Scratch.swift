import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory for one test, removed when released (AuditSupportTests does not link TestKit: the support
/// target is tested on its own).
final class Scratch: Sendable {
    /// The directory.
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "audit-support-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` with `mode`, and returns its path.
    func write(_ name: String, _ text: String, mode: mode_t) throws -> String {
        let path = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, mode)
        return path
    }

    /// The permission bits of `path`, or nil if it does not exist.
    static func mode(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode & 0o777)
    }
}
