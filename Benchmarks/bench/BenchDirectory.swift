import Foundation

/// The run's temporary directory: every database and file of the run lives in it.
struct BenchDirectory: Sendable {
    let path: String

    /// Creates `audit-bench-<pid>-<random>` under `base`.
    init(base: String) throws {
        let name = "audit-bench-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: .min ... .max))"
        path = URL(fileURLWithPath: base).appendingPathComponent(name).path
        try FileManager.default.createDirectory(
            atPath: path,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
    }

    /// Creates a subdirectory (mode 0700) and returns its path.
    func subdirectory(_ name: String) throws -> String {
        let sub = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: sub,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        return sub
    }

    /// Deletes everything.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The file system type of the directory as /proc/mounts names it (ext4, xfs, tmpfs...), when known.
    var fileSystem: String {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
        var best = (length: -1, type: "unknown")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = String(fields[1])
            let prefix = mountPoint.hasSuffix("/") ? mountPoint : mountPoint + "/"
            if (path == mountPoint || path.hasPrefix(prefix)) && mountPoint.count > best.length {
                best = (mountPoint.count, String(fields[2]))
            }
        }
        return best.type
    }
}
