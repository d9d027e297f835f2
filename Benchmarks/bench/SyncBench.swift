import AuditChain
import AuditCollector
import AuditAgent
import AuditStore
import AuditSync
import AuditWire
import Crypto
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Delivery to an in-process collector over loopback HTTP (verification on): throughput of `SyncEngine` cycles
/// over a pre-filled log, and how long a 1000-entry backlog takes to drain once the backend returns.
enum SyncBench {
    /// Events of the throughput figure.
    static let throughputEvents = 20_000
    /// Entries per batch of the throughput figures (the default, and the collector's maximum).
    static let batchSizes = [1000, 5000]
    /// Pending entries of the drain figure.
    static let backlog = 1000

    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let folder = try directory.subdirectory("sync")
        let events = options.quick ? 5000 : throughputEvents
        try await withCollector(database: folder + "/collector.sqlite", port: 0) { port in
            for batch in batchSizes {
                try await throughput(events: events, batchSize: batch, folder: folder, port: port, summary: summary)
            }
        }
        try await drain(folder: folder, summary: summary)
    }

    /// A log with `count` pending events, appended in calls of `batch`.
    static func prefilledLog(_ folder: String, name: String, count: Int, batch: Int = 1000) async throws -> AuditLog {
        let log = try await StateDirectory(path: folder + "/\(name)")
            .createLog(deviceId: "device-7d0e5b3a91c4", configuration: EventFactory.configuration())
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            _ = try await log.append(EventFactory.events(start..<end))
            start = end
        }
        return log
    }

    /// The limits of the benchmark: everything stays pending (no FIFO), batches of `batchSize`.
    static func policy(batchSize: Int = 1000) -> DeliveryPolicy {
        var policy = DeliveryPolicy()
        policy.maxEvents = 1_000_000
        policy.degradedPending = 1_000_000
        policy.batchSize = batchSize
        return policy
    }

    /// Wraps a transport and adds up the time spent in `send` (HTTP, and the collector's work in this process).
    final class TimedTransport: SyncTransport {
        let inner: any SyncTransport
        let spent = Mutex(Duration.zero)

        init(_ inner: any SyncTransport) { self.inner = inner }

        func collectorKey() async -> Curve25519.Signing.PublicKey? { await inner.collectorKey() }

        func send(_ batch: SyncBatch) async -> TransportOutcome {
            let start = ContinuousClock.now
            let outcome = await inner.send(batch)
            spent.withLock { $0 += ContinuousClock.now - start }
            return outcome
        }
    }

    static func throughput(events: Int, batchSize: Int, folder: String, port: Int, summary: Summary) async throws {
        let log = try await prefilledLog(folder, name: "throughput-\(batchSize)", count: events)
        let transport = TimedTransport(
            HTTPSyncTransport(backend: URL(string: "http://127.0.0.1:\(port)")!, token: nil)
        )
        let engine = try SyncEngine(log: log, transport: transport, policy: policy(batchSize: batchSize))
        let total = try log.storage.deliveryTable(scope: .counts).count(.pending)
        var cycles = 0
        var delivered = 0
        // The machine's speed drifts (other guests): the collector's ceiling, Ed25519 verify on every core, is
        // measured right before and after, so a slow run can be told from a slow machine.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let verifyBefore = try PrimitiveRates.verifyRate(seconds: 0.5, threads: cores)
        let cpu = ProcessStats.cpuSeconds
        let seconds = try await Timing.measureAsync {
            while delivered < total, cycles < total / batchSize * 4 + 10 {
                let report = try await engine.cycle()
                if let failure = report.failure { throw BenchError("sync failed: \(failure)") }
                delivered += report.delivered
                cycles += 1
            }
        }
        guard delivered == total else { throw BenchError("delivered \(delivered) of \(total) entries") }
        let verifyAfter = try PrimitiveRates.verifyRate(seconds: 0.5, threads: cores)
        summary.add(
            Figure(
                name: "sync \(Timing.grouped(Double(total))) entries to a loopback collector, batches of \(batchSize)",
                value: Double(total) / seconds,
                unit: .rate,
                target: .valueAtLeast(8000)
            )
        )
        Summary.say(
            "  \(cycles) cycles in \(Timing.duration(seconds)), \(Timing.duration(seconds / Double(cycles))) a batch; "
                + "CPU \(Timing.duration(ProcessStats.cpuSeconds - cpu)) (agent and collector in this process); "
                + "in send (HTTP + collector) \(Timing.duration(Timing.seconds(transport.spent.withLock { $0 }))), "
                + "the rest is the engine (limits, batch selection, entry reads, delivery-table transactions)"
        )
        let ceiling = (verifyBefore + verifyAfter) / 2
        Summary.say(
            "  Ed25519 verify on \(cores) threads just before / after: \(Timing.rate(verifyBefore)) / "
                + "\(Timing.rate(verifyAfter)); sync reached \(Timing.short(Double(total) / seconds / ceiling)) of it "
                + "(the collector checks every signature)"
        )
    }

    /// 1000 entries pending with the backend down; the engine's `run()` loop (system clocks) fails twice, the
    /// backend returns half a second into the second backoff pause, and the time until everything is delivered
    /// is measured: what a real agent sees after a short outage.
    static func drain(folder: String, summary: Summary) async throws {
        let log = try await prefilledLog(folder, name: "drain", count: backlog - 1)
        let port = try freePort()
        let transport = HTTPSyncTransport(backend: URL(string: "http://127.0.0.1:\(port)")!, token: nil)
        let origin = ContinuousClock.now
        let failures = EventTimes()
        // The engine's monotonic times count from this benchmark's origin, so its pause reads on the same axis.
        let clocks = SyncEngine.Clocks(monotonic: ContinuousClock(), origin: origin)
        let engine = try SyncEngine(log: log, transport: transport, policy: policy(), clocks: clocks) { event in
            if event.message == "backend unavailable" {
                failures.times.withLock { $0.append(ContinuousClock.now - origin) }
            }
        }
        let loop = Task { await engine.run() }
        defer { loop.cancel() }
        let deadline = ContinuousClock.now + .seconds(30)
        while failures.times.withLock({ $0.count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        guard failures.times.withLock({ $0.count }) >= 2 else { throw BenchError("the engine did not retry") }
        try await Task.sleep(for: .milliseconds(500))
        try await withCollector(database: folder + "/drain-collector.sqlite", port: port) { _ in
            let returned = ContinuousClock.now
            let pausedFor = await engine.state.pausedUntil - (returned - origin)
            let pending = try log.storage.deliveryTable(scope: .counts).count(.pending)
            let limit = ContinuousClock.now + .seconds(600)
            while ContinuousClock.now < limit {
                let left = try log.storage.deliveryTable(scope: .counts).count(.pending)
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(2))
            }
            let done = ContinuousClock.now
            guard try log.storage.deliveryTable().items.isEmpty else { throw BenchError("the backlog did not drain") }
            loop.cancel()
            let total = Timing.seconds(done - returned)
            summary.add(
                Figure(
                    name: "drain \(pending) pending after the backend returns (run loop, real backoff)",
                    value: total,
                    unit: .seconds,
                    target: .valueBelow(1)
                )
            )
            // The reachability probe ends the pause early; without it the drain would wait out the pause.
            let waited = total < Timing.seconds(pausedFor) ? "ended early by the reachability probe" : "waited out"
            Summary.say(
                "  backoff left when the backend returned: \(Timing.duration(Timing.seconds(pausedFor))) "
                    + "(after \(failures.times.withLock { $0.count }) failures), \(waited)"
            )
        }
        await loop.value
    }

    /// When the engine reported something, relative to the run's origin.
    final class EventTimes: Sendable {
        let times = Mutex<[Duration]>([])
    }

    /// A free loopback port (bound, read back and closed: another process could take it, unlikely on loopback).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a collector on 127.0.0.1:`port` (0: any) for the duration of `body`, which gets the bound port.
    static func withCollector(
        database: String,
        port: Int,
        _ body: (Int) async throws -> Void
    ) async throws {
        var configuration = CollectorConfiguration(databasePath: database)
        configuration.port = port
        let server = try await CollectorServer(configuration: configuration)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { continuation.finish() }
                try await server.run { port in continuation.yield(port) }
            }
            guard let bound = await ports.first(where: { _ in true }) else {
                throw BenchError("the collector did not start")
            }
            do {
                try await body(bound)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }
}
