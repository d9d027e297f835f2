import AuditChain
import AuditCollector
import AuditAgent
import AuditStore
import AuditSync
import AuditWire
import Crypto
import Foundation
import Synchronization
import Testing
import TestKit

/// The HTTP transport with a recorder of what came back, and a switch that corrupts one entry's signature on the
/// way out (to make the collector refuse exactly that entry).
final class RecordingTransport: SyncTransport {
    private let inner: HTTPSyncTransport
    private let state = Mutex((corrupt: UInt64?.none, responses: [SyncResponse](), failures: [String]()))

    init(_ inner: HTTPSyncTransport) { self.inner = inner }

    /// Flips the last signature byte of the entry `seq` in every batch sent until reset to nil.
    func corrupt(_ seq: UInt64?) { state.withLock { $0.corrupt = seq } }

    /// Parsed 200 responses, in order.
    var responses: [SyncResponse] { state.withLock { $0.responses } }

    func collectorKey() async -> Curve25519.Signing.PublicKey? { await inner.collectorKey() }

    func send(_ batch: SyncBatch) async -> TransportOutcome {
        var batch = batch
        if let seq = state.withLock({ $0.corrupt }), let index = batch.entries.firstIndex(where: { $0.seq == seq }) {
            batch.entries[index].bytes[batch.entries[index].bytes.count - 1] ^= 0x01
        }
        let outcome = await inner.send(batch)
        state.withLock { state in
            switch outcome {
            case .response(200, _, let body):
                if let json = try? JSONValue(parsing: body), let response = try? SyncResponse(json: json) {
                    state.responses.append(response)
                }
            case .response(let status, _, _):
                state.failures.append("HTTP \(status)")
            case .failure(let reason):
                state.failures.append(reason)
            }
        }
        return outcome
    }
}

/// A log on SQLite in a temporary state directory, delivered by a ``SyncEngine`` over real HTTP through a
/// ``FaultProxy`` to an in-process collector.
struct SyncFixture {
    let log: AuditLog
    let engine: SyncEngine
    let transport: RecordingTransport
    let proxy: FaultProxy
    let collector: Collector
    let clocks: ManualClocks
    /// The collector's database file (for tests that play a collector rewriting its history).
    let database: String
    /// The witness of the collector, when the fixture runs with one (the engine then requires its cosignature).
    var witness: WitnessService? = nil

    /// Runs `body` with a fresh collector, proxy, log and engine; shuts the proxy and collector down after.
    /// - Parameter timeout: the transport's request timeout. Long by default: a test that expects one cycle to
    ///   succeed (or to fail with the proxy's answer) must not see a timeout because the suite's other tests keep
    ///   both cores busy (a CI run failed a one-cycle delivery on a 1 s timeout; with two CPU hogs beside the whole
    ///   suite, a pinned delivery outlasted 30 s). Only the tests of timeouts set a short one.
    /// - Parameter witnessed: runs a witness of the collector, which the collector asks to cosign each answer and
    ///   whose cosignature the engine requires (quorum 1).
    /// - Parameter log: the log's settings (format version, epochs, signing interval).
    static func run(
        policy: DeliveryPolicy = .init(),
        timeout: Duration = .seconds(300),
        witnessed: Bool = false,
        log settings: AuditLog.Configuration = .init(),
        _ body: (SyncFixture) async throws -> Void
    ) async throws {
        let directory = CollectorTempDir()
        var witness: WitnessService?
        var endpoints: [WitnessEndpoint] = []
        if witnessed {
            let key = try CollectorKeyFile.loadOrCreate(
                path: CollectorKeyFile.defaultPath(database: directory.database)
            )
            let service = try WitnessService(logName: Collector.defaultName, logKey: key.publicKey)
            endpoints = [try await service.start()]
            witness = service
        }
        defer { if let witness { Task { await witness.stop() } } }
        try await withCollector(directory, witnesses: endpoints) { client, collector in
            let proxy = try FaultProxy(upstream: client.port)
            defer { proxy.shutdown() }
            let state = StateDirectory(path: directory.path + "/agent")
            try state.create()
            let log = try await AuditLog.create(
                storage: SQLiteLogStorage(path: state.databasePath),
                keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
                deviceId: "device-e2e",
                configuration: settings
            )
            let clocks = ManualClocks(monotonic: .seconds(1000), wall: Int64(Date().timeIntervalSince1970 * 1000))
            let transport = RecordingTransport(HTTPSyncTransport(backend: proxy.url, token: nil, timeout: timeout))
            // The collector's receipt key is pinned as an operator would configure it (the first-contact pin goes
            // through the key endpoint, which the proxy's faults would reach too).
            let engine = try SyncEngine(
                log: log,
                transport: transport,
                policy: policy,
                clocks: clocks.clocks,
                collectorKey: collector.receiptKey.publicKey,
                witnessKeys: endpoints.map(\.key),
                witnessQuorum: witnessed ? 1 : nil
            )
            var fixture = SyncFixture(
                log: log,
                engine: engine,
                transport: transport,
                proxy: proxy,
                collector: collector,
                clocks: clocks,
                database: directory.database
            )
            fixture.witness = witness
            try await body(fixture)
        }
    }

    /// Appends `count` routine events.
    @discardableResult
    func append(_ count: Int) async throws -> [UInt64] {
        let events = (0..<count).map { index in
            AuditEvent(
                type: "BIOMETRIC_AUTH_SUCCESS",
                occurredAt: AuditTimestamp.now(),
                userId: "user-\(index % 3)",
                deviceId: "device-e2e",
                attributes: ["unlockDurationMs": .integer(Int64(100 + index))],
                idempotencyKey: UUID().uuidString
            )
        }
        return try await log.append(events).map(\.seq)
    }

    var table: DeliveryTable { get throws { try log.storage.deliveryTable() } }

    /// The pause the engine is in, from now.
    var pause: Duration { get async { await engine.state.pausedUntil - clocks.monotonic } }

    /// The failed cycle did no harm: nothing delivered, every entry still pending with 0 attempts, no DLQ.
    func expectNoHarm(_ report: SyncEngine.CycleReport, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(report.attempted, sourceLocation: sourceLocation)
        #expect(report.failure != nil, sourceLocation: sourceLocation)
        #expect(report.delivered == 0 && report.deadLettered == 0, sourceLocation: sourceLocation)
        let table = try table
        #expect(table.count(.dlq) == 0, sourceLocation: sourceLocation)
        #expect(!table.items.isEmpty, sourceLocation: sourceLocation)
        #expect(
            table.items.values.allSatisfy { $0.state == .pending && $0.attempts == 0 },
            sourceLocation: sourceLocation
        )
    }

    /// Switches the proxy to pass-through, lets the pause run out, and cycles (bounded) until nothing is left.
    func recover() async throws {
        try proxy.set(.passThrough)
        for _ in 0..<20 {
            clocks.advance(max(await pause, .zero) + .milliseconds(1))
            try await engine.cycle()
            if try table.items.isEmpty { return }
        }
        Issue.record("delivery did not finish: \(try table.items.count) entries left")
    }

    /// Every local entry is held by the collector exactly once with the same bytes, no fork was seen, and the
    /// collector's head and the receipt the agent keeps both equal the local head.
    func expectExactlyOnce(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let info = try log.info()
        let held = try await collector.store.entries(logId: info.logId)
        #expect(held.map(\.seq) == Array(0...info.head.seq), sourceLocation: sourceLocation)
        let local = try log.storage.entries(from: 0, through: info.head.seq, limit: Int(info.head.seq) + 1)
        #expect(held.map(\.bytes) == local.map(\.bytes), sourceLocation: sourceLocation)
        #expect(try await collector.store.forks(logId: info.logId).isEmpty, sourceLocation: sourceLocation)
        let head = try await collector.store.head(logId: info.logId)
        #expect(head?.seq == info.head.seq && head?.hash == info.head.hash, sourceLocation: sourceLocation)
        #expect(try DeliveryStatus.read(log.storage).receiptSeq == info.head.seq, sourceLocation: sourceLocation)
    }
}
