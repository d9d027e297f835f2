import AuditAgent
import AuditChain
import AuditCollector
import AuditStore
import AuditSync
import AuditWire
import Crypto
import Foundation
import Testing
import TestKit

/// Delivery that cannot silently diverge (issue 20): pinned records survive every limit, refusals of the log pause
/// instead of spending attempts, receipts are verified, and the collector's copy recovers by itself. Real HTTP on
/// loopback through the fault proxy; the engine's clocks are manual, so backoff never sleeps.
@Suite("Delivery trust", .serialized)
struct DeliveryTrustTests {
    /// An agent's log and engine in front of a proxy the test points at one collector or another.
    struct Rig {
        let log: AuditLog
        let engine: SyncEngine
        let proxy: FaultProxy
        let clocks: ManualClocks

        static func make(
            _ directory: CollectorTempDir,
            upstream: Int,
            collectorKey: Curve25519.Signing.PublicKey?,
            policy: DeliveryPolicy
        ) async throws -> Rig {
            let proxy = try FaultProxy(upstream: upstream)
            let state = StateDirectory(path: directory.path + "/agent")
            try state.create()
            let log = try await AuditLog.create(
                storage: SQLiteLogStorage(path: state.databasePath),
                keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
                deviceId: "device-trust"
            )
            let clocks = ManualClocks(monotonic: .seconds(1000), wall: Int64(Date().timeIntervalSince1970 * 1000))
            // Long: a cycle these tests expect to succeed must not time out on a machine the suite keeps busy (a
            // loaded run's first cycle outlasted the 30 s default; its genesis was then refused by the burst).
            let transport = RecordingTransport(
                HTTPSyncTransport(backend: proxy.url, token: nil, timeout: .seconds(300))
            )
            let engine = try SyncEngine(
                log: log,
                transport: transport,
                policy: policy,
                clocks: clocks.clocks,
                collectorKey: collectorKey
            )
            return Rig(log: log, engine: engine, proxy: proxy, clocks: clocks)
        }

        @discardableResult
        func append(_ count: Int, critical: Bool = false) async throws -> [UInt64] {
            let events = (0..<count).map { index in
                critical
                    ? AuditEvent(
                        type: "BIOMETRIC_AUTH_FAILURE",
                        occurredAt: AuditTimestamp.now(),
                        userId: "user",
                        deviceId: "device-trust",
                        attributes: ["attemptCount": .integer(1), "errorCode": .string("NO_MATCH")],
                        idempotencyKey: UUID().uuidString
                    )
                    : AuditEvent(
                        type: "BIOMETRIC_AUTH_SUCCESS",
                        occurredAt: AuditTimestamp.now(),
                        userId: "user-\(index % 3)",
                        deviceId: "device-trust",
                        attributes: ["unlockDurationMs": .integer(Int64(100 + index))],
                        idempotencyKey: UUID().uuidString
                    )
            }
            return try await log.append(events).map(\.seq)
        }

        var status: DeliveryStatus {
            get throws { try DeliveryStatus.read(log.storage, now: clocks.wall) }
        }

        /// Cycles (bounded), letting every pause run out, until the verified collector head is the device head.
        /// - Returns: the cycles it took.
        func recover(maxCycles: Int = 40) async throws -> Int {
            for cycle in 1...maxCycles {
                let pause = await engine.state.pausedUntil - clocks.monotonic
                clocks.advance(max(pause, .zero) + .milliseconds(1))
                try await engine.cycle()
                let status = try status
                if status.receiptSeq == status.lag.deviceHead, status.pending == 0 { return cycle }
            }
            Issue.record("the collector's verified head did not reach the device head: \(try status.json)")
            return maxCycles
        }
    }

    /// Verifies the collector's copy with nothing but the device's genesis key, as `auditctl verify --bundle` does.
    static func verifyCopy(_ collector: Collector, logId: [UInt8]) async throws -> VerificationReport {
        let held = try await collector.store.entries(logId: logId)
        let genesis = try SealedEntry(serialized: try #require(held.first).bytes)
        guard case .genesis(let record) = try SystemRecord(kind: genesis.header.kind, payload: genesis.payload) else {
            throw CollectorError(.invalidConfiguration, "the copy does not start with a genesis")
        }
        var verifier = ChainVerifier(
            options: .init(trustedKeys: [try Curve25519.Signing.PublicKey(rawRepresentation: record.signingPublicKey)])
        )
        for entry in held { verifier.consume(entry.bytes, storageSeq: entry.seq) }
        return verifier.finish()
    }

    static var burstPolicy: DeliveryPolicy {
        var policy = DeliveryPolicy()
        policy.maxEvents = 100
        policy.maxDeadLetters = 20
        policy.reachabilityProbe = nil
        return policy
    }

    @Test(
        "a burst of whole-request 400s, with and without a key rotation in it: the copy recovers and verifies",
        arguments: [false, true]
    )
    func burstOf400s(rotate: Bool) async throws {
        let directory = CollectorTempDir()
        try await withCollector(directory) { client, collector in
            let rig = try await Rig.make(
                directory,
                upstream: client.port,
                collectorKey: collector.receiptKey.publicKey,
                policy: Self.burstPolicy
            )
            defer { rig.proxy.shutdown() }
            try await rig.append(60)
            try await rig.engine.cycle()
            #expect(try rig.status.receiptSeq == 60)
            // The burst: producers go on, every request is refused as a whole. Events go to the DLQ and overflow
            // it; the records that account for them, and the rotation, are held, never dropped.
            try rig.proxy.set(.status(400))
            var sawFailing = false
            for round in 0..<6 {
                try await rig.append(25, critical: round % 2 == 1)
                if rotate, round == 2 { _ = try await rig.log.rotateKeys(reason: "scheduled") }
                let report = try await rig.engine.cycle()
                sawFailing = sawFailing || report.health == .failing
                rig.clocks.advance(.seconds(1))
            }
            let during = try rig.status
            #expect(sawFailing && during.health == "failing")
            #expect(during.pendingRecords > 0 && during.dropped["dlqOverflow", default: 0] > 0)
            #expect(await rig.engine.heldCount > 0)
            // The collector is back: delivery recovers by itself.
            try rig.proxy.set(.passThrough)
            let cycles = try await rig.recover()
            #expect(cycles <= 10)
            let info = try rig.log.info()
            let status = try rig.status
            #expect(status.health == "healthy" && status.lag.entries == 0 && status.dlq == 0)
            #expect(await rig.engine.heldCount == 0)
            #expect(try await collector.store.head(logId: info.logId)?.seq == info.head.seq)
            let report = try await Self.verifyCopy(collector, logId: info.logId)
            #expect(report.isClean, "\(report.problems)")
            #expect(report.head?.seq == info.head.seq)
            #expect(!report.accounted.isEmpty && report.accounted.contains(where: \.bridgedGap))
        }
    }

    @Test("a genesis refused as not yet trusted is held (failing, no attempts spent), then delivered once trusted")
    func untrustedGenesisThenRegistered() async throws {
        let directory = CollectorTempDir()
        let otherKey = directory.path + "/other.pub"
        try Data(PublicKeyFile.render(logId: [UInt8](repeating: 1, count: 16), keys: [SigningKey.generate().publicKey]))
            .write(to: URL(fileURLWithPath: otherKey))
        let rig: Rig = try await withCollector(directory, trust: [otherKey]) { client, collector in
            let rig = try await Rig.make(
                directory,
                upstream: client.port,
                collectorKey: collector.receiptKey.publicKey,
                policy: DeliveryPolicy()
            )
            try await rig.append(30)
            for _ in 0..<12 {
                let report = try await rig.engine.cycle()
                #expect(report.health == .failing)
                rig.clocks.advance(.seconds(400))
            }
            let table = try rig.log.storage.deliveryTable()
            #expect(table.count(.dlq) == 0 && table.count(.removed) == 0)
            #expect(table.items.values.allSatisfy { $0.state == .pending && $0.attempts == 0 })
            #expect(try rig.status.health == "failing")
            #expect(try rig.status.lastError?.contains("not among the trusted keys") == true)
            return rig
        }
        defer { rig.proxy.shutdown() }
        // The operator registers the device's key: the same database, a collector that trusts it.
        let deviceKey = directory.path + "/device.pub"
        let info = try rig.log.info()
        try Data(PublicKeyFile.render(logId: info.logId, keys: [try rig.log.activeSigningKey().publicKey]))
            .write(to: URL(fileURLWithPath: deviceKey))
        try await withCollector(directory, trust: [otherKey, deviceKey]) { client, collector in
            rig.proxy.setUpstream(client.port)
            _ = try await rig.recover()
            #expect(try await collector.store.head(logId: info.logId)?.seq == info.head.seq)
            #expect(try rig.status.health == "healthy")
            #expect(try await Self.verifyCopy(collector, logId: info.logId).isClean)
        }
    }

    @Test("a collector that signs receipts with another key, or names another hash: failing, nothing dropped")
    func lyingCollector() async throws {
        let directory = CollectorTempDir()
        try await withCollector(directory) { client, collector in
            // The agent pinned another collector's key: every receipt of this one is refused.
            let rig = try await Rig.make(
                directory,
                upstream: client.port,
                collectorKey: SigningKey.generate().publicKey,
                policy: DeliveryPolicy()
            )
            defer { rig.proxy.shutdown() }
            try await rig.append(5)
            for _ in 0..<3 {
                let report = try await rig.engine.cycle()
                #expect(report.health == .failing && report.delivered == 0)
                rig.clocks.advance(.seconds(400))
            }
            let status = try rig.status
            #expect(status.pending == 6 && status.dlq == 0 && status.receiptSeq == nil && status.health == "failing")
            let evidence = try rig.log.storage.snapshot().metadata[CollectorTrust.Meta.rejectedReceipt]
            #expect(evidence?.contains("does not verify with the collector key") == true)
        }
    }
}
