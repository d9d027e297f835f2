import AuditChain
import Foundation

/// `bench alloc-probe COUNT events|append [BATCH]`: makes COUNT benchmark events and, with `append`, appends them to
/// a new SQLite log in calls of BATCH (default 1 000), printing nothing. `scripts/alloc-count` runs it under a malloc
/// counter at two counts: the difference is the allocations per appended event, a figure that does not move with the
/// host's load.
enum AllocProbe {
    static func main(_ arguments: [String]) async throws {
        guard arguments.count >= 2, let count = Int(arguments[0]), count > 0,
            ["events", "append"].contains(arguments[1])
        else {
            throw BenchError("usage: bench alloc-probe COUNT events|append [BATCH]")
        }
        let batch = arguments.count > 2 ? Int(arguments[2]) ?? 0 : 1000
        guard batch > 0 else { throw BenchError("alloc-probe: BATCH must be a positive integer") }
        guard arguments[1] == "append" else {
            _ = EventFactory.events(0..<count)
            return
        }
        // The same events, made batch by batch as they are appended: the difference between the two modes is the
        // appending alone.
        let folder = NSTemporaryDirectory() + "alloc-probe-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await SyncBench.prefilledLog(folder, name: "log", count: count, batch: batch)
    }
}
