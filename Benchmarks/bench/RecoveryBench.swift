import AuditChain
import AuditCollector
import AuditAgent
import AuditQueue
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
        let name = rotate ? "rotation" : "plain"
        let log = try await SyncBench.prefilledLog(folder, name: name, count: 1000)
        try await SyncBench.withCollector(database: folder + "/\(name)-collector.sqlite", port: 0) { port in
            let transport = BurstTransport(
                HTTPSyncTransport(backend: URL(string: "http://127.0.0.1:\(port)")!, token: nil)
            )
            transport.refusing.withLock { $0 = true }
            let engine = try SyncEngine(log: log, transport: transport, policy: DeliveryPolicy())
            let loop = Task { await engine.run() }
            defer { loop.cancel() }
            // Producers: 2 events every 50 ms through the burst.
            let start = ContinuousClock.now
            var index = 1000
            var rotated = false
            while ContinuousClock.now - start < burst {
                _ = try await log.append(EventFactory.events(index..<index + 2))
                index += 2
                engine.notify()
                if rotate, !rotated, ContinuousClock.now - start > burst / 2 {
                    _ = try await log.rotateKeys(reason: "scheduled")
                    rotated = true
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            let during = try DeliveryStatus.read(log.storage)
            transport.refusing.withLock { $0 = false }
            let returned = ContinuousClock.now
            engine.notify()
            let limit = returned + .seconds(120)
            var caughtUp = false
            while ContinuousClock.now < limit {
                let status = try DeliveryStatus.read(log.storage)
                if status.pending == 0, status.lag.entries == 0 {
                    caughtUp = true
                    break
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            let elapsed = Timing.seconds(ContinuousClock.now - returned)
            loop.cancel()
            guard caughtUp else { throw BenchError("the verified collector head did not reach the device head") }
            let info = try log.info()
            let report = try await verifiedCopy(port: port, folder: folder, name: name, log: log)
            summary.add(
                Figure(
                    name: "recovery after a \(Int(Timing.seconds(burst))) s burst of 400s, 1000 queued\(rotate ? ", rotation" : "")",
                    value: elapsed,
                    unit: .seconds,
                    target: .valueBelow(2)
                )
            )
            Summary.say(
                "  during the burst: \(transport.refused.withLock { $0 }) requests refused, health \(during.health), "
                    + "dlq \(during.dlq), pending \(during.pendingEvents) events + \(during.pendingRecords) records, "
                    + "dropped \(during.dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }); after: "
                    + "device head \(info.head.seq) = verified collector head; collector copy verified: \(report)"
            )
        }
    }

    /// Verifies the collector's copy of `log` with the device's genesis key (the collector's database read directly).
    static func verifiedCopy(port: Int, folder: String, name: String, log: AuditLog) async throws -> String {
        let store = try CollectorStore(path: folder + "/\(name)-collector.sqlite")
        let held = try await store.entries(logId: try log.info().logId)
        guard let first = held.first, case .genesis(let genesis) = try SystemRecord(
            kind: try SealedEntry(serialized: first.bytes).header.kind,
            payload: try SealedEntry(serialized: first.bytes).payload
        ) else { throw BenchError("the collector's copy has no genesis") }
        var verifier = ChainVerifier(
            options: .init(trustedKeys: [try Curve25519.Signing.PublicKey(rawRepresentation: genesis.signingPublicKey)])
        )
        for entry in held { verifier.consume(entry.bytes, storageSeq: entry.seq) }
        let report = verifier.finish()
        guard report.isClean else { throw BenchError("the collector's copy does not verify: \(report.problems)") }
        return "\(held.count) entries held, \(report.accounted.count) removal records, clean"
    }
}
