import AuditChain
import AuditCollector
import AuditSync
import AuditWire
import Crypto
import Foundation
import Logging

/// The collector as a fleet service (docs/COLLECTOR.md section 7): many device logs delivered at once over HTTP to
/// the collector on SQLite, on PostgreSQL with one replica, and on PostgreSQL with two replicas (two servers on one
/// database, each log's batches going to both in turn), each rate a ratio to Ed25519 verify × cores measured in the
/// same run. Every entry's signature is verified on ingest: verification bounds the rate unless storage does.
///
/// PostgreSQL comes from `AUDIT_BENCH_POSTGRES_URL`, a database the bench empties of the collector's tables (the
/// private server of `scripts/pg-test-server` is the one to use); without it, only SQLite is measured.
enum FleetBench {
    static let tables = [
        "entries", "keys", "removals", "incidents", "incidentsNotKept", "heads", "batches", "metadata", "trees",
        "tree_tiles", "checkpoints", "tree_bundles", "tree_nonleaves", "witness_sizes", "schema_migrations",
    ]

    static func run(
        options: BenchOptions,
        rates: PrimitiveRates,
        directory: BenchDirectory,
        summary: Summary
    )
        async throws
    {
        let logs = options.quick ? 8 : 16
        let perLog = options.quick ? 2_000 : 5_000
        let batchSize = 500
        let folder = try directory.subdirectory("fleet")
        let started = ContinuousClock.now
        let chains = try await withThrowingTaskGroup(of: (Int, [SealedEntry], [UInt8]).self) { group in
            for index in 0..<logs {
                group.addTask {
                    let chain = try Self.chain(count: perLog)
                    return (index, chain.entries, chain.logId)
                }
            }
            var chains: [(entries: [SealedEntry], logId: [UInt8])] = Array(repeating: ([], []), count: logs)
            for try await (index, entries, logId) in group { chains[index] = (entries, logId) }
            return chains
        }
        Summary.say(
            "  \(logs) device logs of \(Timing.grouped(Double(perLog))) entries sealed in "
                + "\(Timing.duration(Timing.seconds(ContinuousClock.now - started))); batches of \(batchSize), one "
                + "client per log, all at once"
        )
        let reference = rates.verifyTimesCores
        let key = folder + "/collector.key"
        var configurations: [(name: String, database: String, replicas: Int)] = [
            ("SQLite, one process", folder + "/collector.sqlite", 1)
        ]
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["AUDIT_BENCH_POSTGRES_URL"], !url.isEmpty {
            configurations.append(("PostgreSQL, one replica", url, 1))
            configurations.append(("PostgreSQL, two replicas", url, 2))
        } else {
            Summary.say(
                "  no PostgreSQL: set AUDIT_BENCH_POSTGRES_URL to a database the bench may empty (after `eval "
                    + "\"$(scripts/pg-test-server start)\"`, AUDIT_BENCH_POSTGRES_URL=$AUDIT_TEST_POSTGRES_URL); "
                    + "measuring SQLite alone"
            )
        }
        // A fleet at one event per device per minute sends mostly one-entry batches: each is a transaction and a
        // signed checkpoint of its own, so what bounds it is the cost per batch, not per entry.
        // 64 logs at once (issue 35): enough concurrent batches for the collector to group them.
        let smallLogs = options.quick ? 16 : 64
        let small = try (0..<smallLogs).map { _ in try Self.chain(count: options.quick ? 30 : 60) }
        for configuration in configurations {
            if PostgresSettings.isURL(configuration.database) { try await empty(configuration.database) }
            var latencies: [Double] = []
            let batches = try await ingest(
                small,
                database: configuration.database,
                replicas: configuration.replicas,
                key: key,
                batchSize: 1,
                latencies: &latencies
            )
            latencies.sort()
            Summary.say(
                "  \(configuration.name), one-entry batches: \(Timing.grouped(batches)) batches/s; answer p50 "
                    + "\(Timing.duration(Timing.percentile(latencies, 0.5))), p99 "
                    + "\(Timing.duration(Timing.percentile(latencies, 0.99)))"
            )
            summary.add(
                Figure(
                    name: "collector ingest, one-entry batches, \(smallLogs) logs at once: \(configuration.name)",
                    value: batches,
                    unit: .rate,
                    reference: 100_000.0 / 60,
                    referenceName: "100 000 devices at one event a minute"
                )
            )
        }
        for configuration in configurations {
            if PostgresSettings.isURL(configuration.database) { try await empty(configuration.database) }
            var latencies: [Double] = []
            let rate = try await ingest(
                chains,
                database: configuration.database,
                replicas: configuration.replicas,
                key: key,
                batchSize: batchSize,
                latencies: &latencies
            )
            Summary.say(
                "  \(configuration.name): \(Timing.grouped(rate)) entries/s, \(String(format: "%.2f", rate / reference))"
                    + " of verify × \(rates.cores) cores"
            )
            summary.add(
                Figure(
                    name: "collector ingest over HTTP, \(logs) logs at once: \(configuration.name)",
                    value: rate,
                    unit: .rate,
                    reference: reference,
                    referenceName: "Ed25519 verify × \(rates.cores) cores",
                    target: configuration.replicas == 2 ? .ratioAtLeast(0.5) : nil
                )
            )
        }
    }

    /// A chain of a genesis and `count` events, sealed in memory.
    static func chain(count: Int) throws -> (entries: [SealedEntry], logId: [UInt8]) {
        let logId = (0..<16).map { _ in UInt8.random(in: 0...255) }
        var time = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)
        let (initial, genesis) = ChainSealer.genesis(
            logId: logId,
            deviceId: "bench-device",
            signingKey: .generate(),
            dataKey: .generate(),
            time: time
        )
        var sealer = initial
        var entries = [genesis]
        entries.reserveCapacity(count + 1)
        for index in 0..<count {
            time = AuditTimestamp(millisecondsSinceEpoch: time.millisecondsSinceEpoch + 1000)
            let event = AuditEvent(
                type: "BIOMETRIC_AUTH_SUCCESS",
                occurredAt: time,
                userId: "user-\(index % 50)",
                deviceId: "bench-device",
                attributes: ["unlockDurationMs": .integer(Int64(100 + index % 900))],
                idempotencyKey: "bench-\(index)"
            )
            entries.append(try sealer.seal(event, time: time, nonce: (0..<12).map { _ in UInt8.random(in: 0...255) }))
        }
        return (entries, logId)
    }

    /// Drops the collector's tables, so that the run starts from an empty database.
    static func empty(_ url: String) async throws {
        let database = try await PostgresCollectorDatabase(
            settings: try PostgresSettings(url: url, environment: ProcessInfo.processInfo.environment),
            connections: 2,
            logger: Logger(label: "bench")
        )
        _ = try await database.exclusive { session in
            try session.execute("DROP TABLE IF EXISTS \(tables.joined(separator: ", ")) CASCADE", [])
        }
        await database.close()
    }

    /// Entries per second: every log's batches posted by its own client, all logs at once, to `replicas` servers
    /// on `database` (log `i`'s batches to the replicas in turn, starting with replica `i % replicas`); each
    /// batch's answer time (seconds, from send to verified answer) is appended to `latencies`.
    static func ingest(
        _ chains: [(entries: [SealedEntry], logId: [UInt8])],
        database: String,
        replicas: Int,
        key: String,
        batchSize: Int,
        latencies: inout [Double]
    ) async throws -> Double {
        var servers: [CollectorServer] = []
        for _ in 0..<replicas {
            var configuration = CollectorConfiguration(databasePath: database)
            configuration.keyPath = key
            configuration.port = 0
            // The group commit's settings, to compare them (Benchmarks/README.md, "Fleet").
            let environment = ProcessInfo.processInfo.environment
            if let value = environment["AUDIT_BENCH_GROUP_BATCHES"].flatMap(Int.init) {
                configuration.groupCommit.maxBatches = value
            }
            if let value = environment["AUDIT_BENCH_CONCURRENT_GROUPS"].flatMap(Int.init) {
                configuration.groupCommit.concurrentGroups = value
            }
            servers.append(try await CollectorServer(configuration: configuration))
        }
        let total = chains.reduce(0) { $0 + $1.entries.count }
        var seconds = 0.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            var ports: [Int] = []
            for server in servers {
                let (stream, continuation) = AsyncStream<Int>.makeStream()
                group.addTask {
                    defer { continuation.finish() }
                    try await server.run { port in continuation.yield(port) }
                }
                guard let port = await stream.first(where: { _ in true }) else {
                    throw BenchError("a collector did not start")
                }
                ports.append(port)
            }
            let transports = ports.map { port in
                HTTPSyncTransport(backend: URL(string: "http://127.0.0.1:\(port)")!, token: nil, timeout: .seconds(300))
            }
            let start = ContinuousClock.now
            latencies = try await withThrowingTaskGroup(of: [Double].self) { clients in
                for (index, chain) in chains.enumerated() {
                    clients.addTask {
                        var times: [Double] = []
                        var treeSize: UInt64?
                        for (number, from) in stride(from: 0, to: chain.entries.count, by: batchSize).enumerated() {
                            let chosen = chain.entries[from..<min(from + batchSize, chain.entries.count)]
                            let batch = SyncBatch(
                                logId: chain.logId,
                                batchId: SyncWire.batchKey(logId: chain.logId, entries: chosen.map(\.serialized)),
                                entries: chosen.map { SyncEntry(seq: $0.header.seq, bytes: $0.serialized) },
                                checkpoint: nil,
                                treeSize: treeSize
                            )
                            let sent = ContinuousClock.now
                            let outcome = await transports[(index + number) % transports.count].send(batch)
                            times.append(Timing.seconds(ContinuousClock.now - sent))
                            guard case .response(200, _, let body) = outcome,
                                let response = try? SyncResponse(json: try JSONValue(parsing: body)),
                                response.results.allSatisfy({ $0.status == .accepted }),
                                let receipt = response.treeReceipt
                            else { throw BenchError("log \(index) batch \(number) was not accepted: \(outcome)") }
                            treeSize = receipt.leafIndex + 1
                        }
                        return times
                    }
                }
                var all: [Double] = []
                for try await times in clients { all += times }
                return all
            }
            seconds = Timing.seconds(ContinuousClock.now - start)
            group.cancelAll()
        }
        for server in servers { await server.collector.store.close() }
        return Double(total) / seconds
    }
}
