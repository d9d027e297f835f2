import AuditChain
import AuditCollector
import AuditWire
import BiometricUnlock
import Foundation
import TestKit

/// Issue 35's fleet simulation: `devices` simulated devices, each its own log (a genesis each, sent with its first
/// event), each sending one event at a time at exponentially distributed intervals averaging a minute divided by the
/// time scale, for a fixed wall time, to two collector replicas on PostgreSQL (device `i` to replica `i % 2`), or
/// to one on SQLite without `AUDIT_BENCH_POSTGRES_URL`. Every answer is checked as an agent checks it
/// (``SimulatedDevice/receipt(_:key:retried:)``); at the end the collector's head of every log must be the last
/// seq its device sent, with exactly the entries up to it held and in the tree (per-log order kept), and every
/// entry sent must be receipted. Reported: the rate achieved against the rate offered, and the lag from sealing an
/// event to its verified receipt.
enum FleetSimulation {
    /// What one device's run came to.
    struct Outcome: Sendable {
        var device: SimulatedDevice
        /// Batches sent, and receipted.
        var sent = 0
        var receipted = 0
        /// Retries after no answer or a retryable status.
        var retries = 0
        /// Seconds from sealing each receipted event to its verified answer.
        var lags: [Double] = []
        /// Why the device stopped early.
        var failure: String?
    }

    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let devices = options.simulationDevices ?? (options.quick ? 1_000 : 10_000)
        let seconds = Double(options.simulationSeconds ?? (options.quick ? 20 : 60))
        let scale = Double(options.timeScale)
        let meanInterval = 60 / scale
        let environment = ProcessInfo.processInfo.environment
        let connections = environment["AUDIT_BENCH_SIM_CONNECTIONS"].flatMap(Int.init) ?? 16
        let folder = try directory.subdirectory("simulation")
        var database = folder + "/collector.sqlite"
        var replicas = 1
        var name = "SQLite, one process"
        if let url = environment["AUDIT_BENCH_POSTGRES_URL"], !url.isEmpty {
            try await FleetBench.empty(url)
            (database, replicas, name) = (url, 2, "PostgreSQL, two replicas")
        } else {
            Summary.say(
                "  no PostgreSQL: set AUDIT_BENCH_POSTGRES_URL (see the fleet section) for two replicas on one "
                    + "database; simulating against one SQLite collector"
            )
        }
        let offered = Double(devices) / meanInterval
        let genesisTime = AuditTimestamp.now()
        let fleet = (0..<devices).map { SimulatedDevice(index: $0, time: genesisTime) }
        Summary.say(
            "  \(Timing.grouped(Double(devices))) devices, one log each, one event at a time every "
                + "\(Timing.short(meanInterval)) s on average (a minute / time scale \(Timing.short(scale))) for "
                + "\(Timing.short(seconds)) s: \(Timing.rate(offered)) offered to \(name); \(connections) "
                + "connections per replica"
        )
        var servers: [CollectorServer] = []
        for _ in 0..<replicas {
            var configuration = CollectorConfiguration(databasePath: database)
            configuration.keyPath = folder + "/collector.key"
            configuration.port = 0
            servers.append(try await CollectorServer(configuration: configuration))
        }
        let store = servers[0].collector.store
        let (outcomes, elapsed, order) = try await serveAll(servers[...], ports: []) { ports in
            let client = try await SimulationClient.connect(ports: ports, connectionsPerReplica: connections)
            let (outcomes, elapsed) = await simulate(
                fleet,
                client: client,
                seconds: seconds,
                meanInterval: meanInterval
            )
            await client.shutdown()
            return (outcomes, elapsed, try await checkOrder(outcomes, store: store))
        }
        try report(outcomes, elapsed: elapsed, order: order, offered: offered, name: name, summary: summary)
    }

    /// Runs every device until `seconds` have passed (then each finishes the batch it is sending); returns their
    /// outcomes and the wall seconds from the start to the last answer.
    static func simulate(
        _ fleet: [SimulatedDevice],
        client: SimulationClient,
        seconds: Double,
        meanInterval: Double
    ) async -> ([Outcome], Double) {
        let start = ContinuousClock.now
        let end = start + .seconds(seconds)
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for device in fleet {
                group.addTask {
                    await run(device, client: client, start: start, end: end, meanInterval: meanInterval)
                }
            }
            var outcomes: [Outcome] = []
            outcomes.reserveCapacity(fleet.count)
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        return (outcomes, Timing.seconds(ContinuousClock.now - start))
    }

    /// One device's loop: wait for the next event (a Poisson process: exponential intervals from a generator seeded
    /// with the device's number), seal it, send it to replica `index % replicas`, and check the answer, retrying a
    /// batch that got no answer or a retryable status (as an agent does, with backoff).
    static func run(
        _ device: SimulatedDevice,
        client: SimulationClient,
        start: ContinuousClock.Instant,
        end: ContinuousClock.Instant,
        meanInterval: Double
    ) async -> Outcome {
        var outcome = Outcome(device: device)
        var random = SplitMix64(seed: 0x5EED_F1EE_7000_0000 &+ UInt64(device.index))
        let replica = device.index % client.urls.count
        var due = start
        while true {
            let uniform = Double(random.next() >> 11) / Double(UInt64(1) << 53)
            due = due + .seconds(-log(1 - uniform) * meanInterval)
            if due >= end { break }
            try? await Task.sleep(until: due, clock: .continuous)
            let sealedAt = ContinuousClock.now
            do {
                let batch = try outcome.device.nextBatch(time: .now())
                outcome.sent += 1
                var attempt = 0
                while true {
                    let answer = await client.send(batch, to: replica)
                    if case .response(200, let body) = answer {
                        let response = try SyncResponse(json: try JSONValue(parsing: body))
                        try outcome.device.receipt(response, key: client.collectorKey, retried: attempt > 0)
                        break
                    }
                    if case .response(let status, _) = answer, ![408, 429].contains(status), status < 500 {
                        throw BenchError("device \(device.index): the batch was refused with \(status)")
                    }
                    attempt += 1
                    outcome.retries += 1
                    guard attempt <= 5 else { throw BenchError("device \(device.index): no answer: \(answer)") }
                    try? await Task.sleep(for: .milliseconds(200 * attempt))
                }
                outcome.receipted += 1
                outcome.lags.append(Timing.seconds(ContinuousClock.now - sealedAt))
            } catch {
                outcome.failure = String(describing: error)
                break
            }
        }
        return outcome
    }

    /// Runs `servers` (gracefully, each on its database's pool) for the duration of `body`, which gets their ports.
    static func serveAll<T: Sendable>(
        _ servers: ArraySlice<CollectorServer>,
        ports: [Int],
        _ body: ([Int]) async throws -> T
    ) async throws -> T {
        guard let server = servers.first else { return try await body(ports) }
        return try await serveGracefully(server) { port in
            try await serveAll(servers.dropFirst(), ports: ports + [port], body)
        }
    }
}
