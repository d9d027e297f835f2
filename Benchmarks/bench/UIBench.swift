import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The collector's pages (docs/COLLECTOR-UI.md) at fleet scale: the fleet page of a collector holding 10 000 device
/// logs, and the page of one log of 1 000 000 entries, each asked for over HTTP from an in-process collector with
/// `--public-read`; figure: the p95 of the answer time (whole HTML page received). On SQLite, and on PostgreSQL when
/// `AUDIT_BENCH_POSTGRES_URL` names a database the bench may empty (as `fleet`).
enum UIBench {
    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let folder = try directory.subdirectory("ui")
        var engines = [("SQLite", folder + "/collector.sqlite")]
        if let url = ProcessInfo.processInfo.environment["AUDIT_BENCH_POSTGRES_URL"], !url.isEmpty {
            try await FleetBench.empty(url)
            engines.append(("PostgreSQL", url))
        } else {
            Summary.say("  no PostgreSQL: set AUDIT_BENCH_POSTGRES_URL (as for fleet) to measure it too")
        }
        for (engine, database) in engines {
            try await measure(engine: engine, database: database, key: folder + "/collector.key", options, summary)
        }
    }

    /// Fills a collector on `database` and times its two pages.
    static func measure(
        engine: String,
        database: String,
        key: String,
        _ options: BenchOptions,
        _ summary: Summary
    ) async throws {
        let logCount = options.quick ? 1_000 : 10_000
        let bigEntries = options.quick ? 100_000 : 1_000_000
        let samples = options.quick ? 20 : 100
        var configuration = CollectorConfiguration(databasePath: database)
        configuration.keyPath = key
        configuration.port = 0
        configuration.publicRead = true
        var logger = Logger(label: "bench.ui")
        logger.logLevel = .warning
        let server = try await CollectorServer(configuration: configuration, logger: logger)
        let collector = server.collector
        // Served from the start: the server runs the PostgreSQL pool, which the filling below needs too.
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let serving = Task {
            defer { continuation.finish() }
            try await server.run { port in continuation.yield(port) }
        }
        guard let port = await ports.first(where: { _ in true }) else {
            throw BenchError("the collector did not start")
        }

        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for _ in stride(from: worker, to: logCount, by: 4) {
                        let chain = try FleetBench.chain(count: 2)
                        _ = try await collector.ingest(SyncBatch.of(logId: chain.logId, chain.entries))
                    }
                }
            }
            try await group.waitForAll()
        }
        Summary.say(
            "  \(engine): \(Timing.grouped(Double(logCount))) logs of 3 entries ingested in "
                + Timing.duration(Timing.seconds(ContinuousClock.now - started))
        )
        let bigStarted = ContinuousClock.now
        let bigLog = try await ingestLarge(collector, entries: bigEntries)
        Summary.say(
            "  \(engine): one log of \(Timing.grouped(Double(bigEntries))) entries ingested in "
                + Timing.duration(Timing.seconds(ContinuousClock.now - bigStarted))
        )

        for (name, path, bound) in [
            ("fleet page, \(Timing.grouped(Double(logCount))) logs", "/ui/fleet", 0.2),
            ("log page, \(Timing.grouped(Double(bigEntries))) entries", "/ui/logs/\(Hex.encode(bigLog))", 0.1),
        ] {
            let times = try await timeGets("http://127.0.0.1:\(port)\(path)", count: samples)
            let p50 = Timing.percentile(times, 0.5)
            let p95 = Timing.percentile(times, 0.95)
            Summary.say(
                "  \(engine): \(name): p50 \(Timing.duration(p50)), p95 \(Timing.duration(p95)) (\(samples) requests)"
            )
            summary.add(
                Figure(name: "\(name), \(engine): p95", value: p95, unit: .seconds, target: .valueBelow(bound))
            )
        }
        serving.cancel()
        _ = await serving.result
        await collector.store.close()
    }

    /// Seals and ingests one log of a genesis and `entries` events, in batches of 1 000; returns its log id.
    static func ingestLarge(_ collector: Collector, entries: Int) async throws -> [UInt8] {
        let logId = (0..<16).map { _ in UInt8.random(in: 0...255) }
        var time = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)
        let (initial, genesis) = ChainSealer.genesis(
            logId: logId,
            deviceId: "bench-large",
            signingKey: .generate(),
            dataKey: .generate(),
            time: time
        )
        var sealer = initial
        var pending = [genesis]
        var sealed = 0
        while sealed < entries {
            let count = min(1000, entries - sealed)
            for index in sealed..<sealed + count {
                time = AuditTimestamp(millisecondsSinceEpoch: time.millisecondsSinceEpoch + 1000)
                let event = AuditEvent(
                    type: "BIOMETRIC_AUTH_SUCCESS",
                    occurredAt: time,
                    userId: "user-\(index % 50)",
                    deviceId: "bench-large",
                    attributes: ["unlockDurationMs": .integer(Int64(100 + index % 900))],
                    idempotencyKey: "bench-large-\(index)"
                )
                pending.append(
                    try sealer.seal(event, time: time, nonce: (0..<12).map { _ in UInt8.random(in: 0...255) })
                )
            }
            sealed += count
            _ = try await collector.ingest(SyncBatch.of(logId: logId, pending))
            pending.removeAll(keepingCapacity: true)
        }
        return logId
    }

    /// The answer times of `count` sequential GETs of `url`, sorted, after two warm-up requests.
    static func timeGets(_ url: String, count: Int) async throws -> [Double] {
        let request = URLRequest(url: URL(string: url)!)
        var times: [Double] = []
        for index in 0..<count + 2 {
            let started = ContinuousClock.now
            let (_, response) = try await URLSession.shared.data(for: request)
            let elapsed = Timing.seconds(ContinuousClock.now - started)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw BenchError("\(url) did not answer 200")
            }
            if index >= 2 { times.append(elapsed) }
        }
        return times.sorted()
    }
}

extension SyncBatch {
    /// A version 1 batch of `entries` of a log, keyed as the agent keys it.
    static func of(logId: [UInt8], _ entries: [SealedEntry]) -> SyncBatch {
        SyncBatch(
            logId: logId,
            batchId: SyncWire.batchKey(logId: logId, entries: entries.map(\.serialized)),
            entries: entries.map { SyncEntry(seq: $0.header.seq, bytes: $0.serialized) },
            checkpoint: nil
        )
    }
}
