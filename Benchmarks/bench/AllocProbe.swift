import AuditChain
import AuditQueue
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
        let events = EventFactory.events(0..<count)
        guard arguments[1] == "append" else { return }
        let folder = NSTemporaryDirectory() + "alloc-probe-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try await AuditLog.create(
            storage: SQLiteLogStorage(path: folder + "/log.sqlite"),
            keys: KeyStore(directory: folder + "/keys", credentialsDirectory: nil),
            deviceId: "device-7d0e5b3a91c4",
            configuration: EventFactory.configuration()
        )
        var start = 0
        while start < count {
            _ = try await log.append(Array(events[start..<min(count, start + batch)]))
            start += batch
        }
    }
}
