import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The durable-write reference: a file that is appended `size` bytes at a time, each write followed by `fsync`.
final class SyncedFile {
    let path: String
    private let descriptor: Int32
    private let bytes: [UInt8]

    /// Creates (or truncates) the file.
    init(path: String, size: Int) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))") }
        bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    }

    deinit { close(descriptor) }

    /// Appends the bytes and syncs; returns the seconds both took.
    func writeAndSync() throws -> Double {
        var failed = false
        let seconds = Timing.measure {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            failed = written != bytes.count || fsync(descriptor) != 0
        }
        if failed { throw BenchError("write+fsync of \(path) failed: \(String(cString: strerror(errno)))") }
        return seconds
    }

    /// `count` sequential write+fsync latencies after `warmUp` untimed ones, sorted.
    func latencies(count: Int, warmUp: Int) throws -> [Double] {
        for _ in 0..<warmUp { _ = try writeAndSync() }
        return try (0..<count).map { _ in try writeAndSync() }.sorted()
    }
}
