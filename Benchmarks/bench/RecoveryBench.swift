import AuditChain
import AuditCollector
import AuditAgent
import AuditStore
import AuditSync
import AuditWire
import Crypto
import Foundation
import Synchronization

/// Issue 20's measurement: 1000 events queued, a 20 s burst in which every request is refused as a whole with
/// HTTP 400 while producers go on at 40 events/s (optionally with a key rotation in the middle), then the collector
/// returns. The engine's real run loop (system clocks, real backoff) delivers over loopback HTTP to an in-process
/// collector; the figure is the time from the collector's return to the verified collector head reaching the
/// device's head. The collector's copy is then verified.
enum RecoveryBench {
    /// Refuses every request with 400 while `refusing` (as a fault-injecting proxy would), else forwards.
    final class BurstTransport: SyncTransport {
        let inner: HTTPSyncTransport
        let refusing = Mutex(false)
        let refused = Mutex(0)

        init(_ inner: HTTPSyncTransport) { self.inner = inner }

        func collectorKey() async -> Curve25519.Signing.PublicKey? { await inner.collectorKey() }

        func send(_ batch: SyncBatch) async -> TransportOutcome {
            if refusing.withLock({ $0 }) {
                refused.withLock { $0 += 1 }
                return .response(status: 400, retryAfter: nil, body: Array(#"{"error":"injected 400"}"#.utf8))
            }
            return await inner.send(batch)
        }
    }

    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let folder = try directory.subdirectory("recovery")
        let burst: Duration = options.quick ? .seconds(5) : .seconds(20)
        for rotate in [false, true] {
            try await measure(rotate: rotate, burst: burst, folder: folder, summary: summary)
        }
    }

    static func measure(rotate: Bool, burst: Duration, folder: String, summary: Summary) async throws {
        for traffic in [true, false] {
            let name = (rotate ? "rotation" : "plain") + (traffic ? "-traffic" : "-quiet")
            let log = try await SyncBench.prefilledLog(folder, name: name, count: 1000)
            try await SyncBench.withCollector(database: folder + "/\(name)-collector.sqlite", port: 0) { port in
                try await measure(
                    log: log,
                    port: port,
                    rotate: rotate,
                    traffic: traffic,
                    burst: burst,
                    name: name,
                    folder: folder,
                    summary: summary
                )
            }
        }
    }

    /// One run. With `traffic`, producers go on at 40 events/s after the collector returns, as in the issue, and the
    /// figure is the time until a verified receipt covers the device head as it was at the return; without, they
    /// stop at the return, and it is the time until the verified head is the device head.
    static func measure(
        log: AuditLog,
        port: Int,
        rotate: Bool,
        traffic: Bool,
        burst: Duration,
        name: String,
        folder: String,
        summary: Summary
    ) async throws {
        let transport = BurstTransport(HTTPSyncTransport(backend: URL(string: "http://127.0.0.1:\(port)")!, token: nil))
        transport.refusing.withLock { $0 = true }
        let engine = try SyncEngine(log: log, transport: transport, policy: DeliveryPolicy())
        let loop = Task { await engine.run() }
        defer { loop.cancel() }
        let start = ContinuousClock.now
        let producing = Mutex(true)
        // Producers: 2 events every 50 ms.
        let producers = Task {
            var index = 1000
            var rotated = false
            while producing.withLock({ $0 }), !Task.isCancelled {
                _ = try await log.append(EventFactory.events(index..<index + 2))
                index += 2
                engine.notify()
                if rotate, !rotated, ContinuousClock.now - start > burst / 2 {
                    _ = try await log.rotateKeys(reason: "scheduled")
                    rotated = true
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { producers.cancel() }
        try await Task.sleep(for: burst)
        let during = try DeliveryStatus.read(log.storage)
        if !traffic {
            producing.withLock { $0 = false }
            try await producers.value
        }
        let target = try log.info().head.seq
        transport.refusing.withLock { $0 = false }
        let returned = ContinuousClock.now
        engine.notify()
        let limit = returned + .seconds(120)
        var caughtUp = false
        while ContinuousClock.now < limit {
            let status = try DeliveryStatus.read(log.storage)
            if let head = status.receiptSeq, head >= target, traffic || status.pending == 0 {
                caughtUp = true
                break
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = Timing.seconds(ContinuousClock.now - returned)
        producing.withLock { $0 = false }
        try await producers.value
        guard caughtUp else { throw BenchError("the verified collector head did not reach the device head") }
        // Let the copy settle (the last events, the records of the last removals), then verify it.
        engine.notify()
        let settle = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < settle {
            let status = try DeliveryStatus.read(log.storage)
            if status.pending == 0, status.lag.entries == 0 { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        loop.cancel()
        let report = try await verifiedCopy(port: port, folder: folder, name: name, log: log)
        summary.add(
            Figure(
                name: "recovery after a \(Int(Timing.seconds(burst))) s burst of 400s, 1000 queued"
                    + (rotate ? ", rotation" : "") + (traffic ? ", producers on" : ", producers stopped"),
                value: elapsed,
                unit: .seconds,
                target: traffic ? .valueBelow(2) : nil
            )
        )
        Summary.say(
            "  during the burst: \(transport.refused.withLock { $0 }) requests refused, health \(during.health), "
                + "dlq \(during.dlq), pending \(during.pendingEvents) events + \(during.pendingRecords) records, "
                + "dropped \(during.dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }); "
                + "verified head reached seq \(target) (the device head at the return); collector copy: \(report)"
        )
    }

    /// Verifies the collector's copy of `log` with the device's genesis key (the collector's database read directly).
    static func verifiedCopy(port: Int, folder: String, name: String, log: AuditLog) async throws -> String {
        let store = try CollectorStore(path: folder + "/\(name)-collector.sqlite")
        let held = try await store.entries(logId: try log.info().logId)
        guard let first = held.first,
            case .genesis(let genesis) = try SystemRecord(
                kind: try SealedEntry(serialized: first.bytes).header.kind,
                payload: try SealedEntry(serialized: first.bytes).payload
            )
        else { throw BenchError("the collector's copy has no genesis") }
        var verifier = ChainVerifier(
            options: .init(trustedKeys: [try Curve25519.Signing.PublicKey(rawRepresentation: genesis.signingPublicKey)])
        )
        for entry in held { verifier.consume(entry.bytes, storageSeq: entry.seq) }
        let report = verifier.finish()
        guard report.isClean else { throw BenchError("the collector's copy does not verify: \(report.problems)") }
        return "\(held.count) entries held, \(report.accounted.count) removal records, clean"
    }
}
