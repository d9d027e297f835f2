import AuditChain
import AuditCollector
import AuditStore
import AuditHTTPClient
import AuditSync
import AuditWire
import Foundation
import Testing
import TestKit

/// Delivery over HTTPS to an in-process collector serving a certificate of a test PKI made by `openssl`: the
/// engine trusts the CA file it is given, refuses what does not chain to it (an outage that drops nothing, whose
/// reason says why), and presents a client certificate to a collector that requires one.
@Suite("TLS delivery", .serialized)
struct TLSDeliveryTests {
    /// Runs `body` with an HTTPS collector serving `certificate` and a fresh log and engine whose transport uses
    /// `tls`; the engine learns the collector's key at first contact, over TLS.
    static func run(
        pki: TestPKI,
        certificate: (certificate: String, key: String),
        clientCA: String? = nil,
        tls: SyncTLS,
        _ body: (SyncEngine, AuditLog, Collector) async throws -> Void
    ) async throws {
        let directory = CollectorTempDir()
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.port = 0
        configuration.tlsCertificateFile = certificate.certificate
        configuration.tlsKeyFile = certificate.key
        configuration.clientCAFile = clientCA
        let server = try await CollectorServer(configuration: configuration)
        try await serveGracefully(server) { port in
            let state = StateDirectory(path: directory.path + "/agent")
            try state.create()
            let log = try await AuditLog.create(
                storage: SQLiteLogStorage(path: state.databasePath),
                keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
                deviceId: "device-tls"
            )
            let clocks = ManualClocks(monotonic: .seconds(1000), wall: Int64(Date().timeIntervalSince1970 * 1000))
            let transport = HTTPSyncTransport(
                backend: URL(string: "https://127.0.0.1:\(port)")!,
                token: nil,
                timeout: .seconds(300),
                tls: tls
            )
            let engine = try SyncEngine(log: log, transport: transport, clocks: clocks.clocks)
            try await body(engine, log, server.collector)
        }
    }

    static func append(_ log: AuditLog, _ count: Int) async throws {
        let events = (0..<count).map { index in
            AuditEvent(
                type: "BIOMETRIC_AUTH_SUCCESS",
                occurredAt: AuditTimestamp.now(),
                userId: "user-\(index)",
                deviceId: "device-tls",
                attributes: ["unlockDurationMs": .integer(Int64(100 + index))],
                idempotencyKey: UUID().uuidString
            )
        }
        _ = try await log.append(events)
    }

    /// Delivers 5 entries (and the genesis); expects them held by the collector and covered by a verified receipt.
    static func expectDelivered(_ engine: SyncEngine, _ log: AuditLog, _ collector: Collector) async throws {
        try await append(log, 5)
        let report = try await engine.cycle()
        #expect(report.failure == nil)
        let info = try log.info()
        #expect(report.delivered == Int(info.head.seq) + 1)
        #expect(try log.storage.deliveryTable().items.isEmpty)
        #expect(try await collector.store.entries(logId: info.logId).count == Int(info.head.seq) + 1)
        #expect(try DeliveryStatus.read(log.storage).receiptSeq == info.head.seq)
    }

    /// Appends 3 entries and runs one cycle that must fail without harm (every entry, the genesis too, still
    /// pending with no attempt counted); returns its reason.
    static func expectRefused(_ engine: SyncEngine, _ log: AuditLog, _ collector: Collector) async throws -> String {
        try await append(log, 3)
        let report = try await engine.cycle()
        #expect(report.attempted)
        #expect(report.delivered == 0 && report.deadLettered == 0)
        let table = try log.storage.deliveryTable()
        #expect(table.count(.dlq) == 0)
        #expect(table.items.count == Int(try log.info().head.seq) + 1)
        #expect(table.items.values.allSatisfy { $0.state == .pending && $0.attempts == 0 })
        #expect(try await collector.store.entries(logId: log.info().logId).isEmpty)
        return report.failure ?? ""
    }

    @Test("HTTPS with the CA file: the key fetched at first contact, entries accepted, receipts verified")
    func deliversOverHTTPS() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(caFile: pki.caCertificate, clientCertificateFile: nil, clientKeyFile: nil)
        try await Self.run(pki: pki, certificate: pki.server, tls: tls) { engine, log, collector in
            try await Self.expectDelivered(engine, log, collector)
        }
    }

    @Test("a certificate from another CA is refused as an unknown CA; nothing is dropped")
    func otherCARefused() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(caFile: pki.caCertificate, clientCertificateFile: nil, clientKeyFile: nil)
        try await Self.run(pki: pki, certificate: pki.otherCA, tls: tls) { engine, log, collector in
            let reason = try await Self.expectRefused(engine, log, collector)
            #expect(reason.contains("unknown CA"), "\(reason)")
            #expect(!reason.contains("expired"), "\(reason)")
        }
    }

    @Test("without a CA file the system's roots are trusted, and they do not include the test CA")
    func systemRootsRefuseTestCA() async throws {
        let pki = try TestPKI.shared.get()
        try await Self.run(pki: pki, certificate: pki.server, tls: SyncTLS()) { engine, log, collector in
            let reason = try await Self.expectRefused(engine, log, collector)
            #expect(reason.contains("unknown CA"), "\(reason)")
        }
    }

    @Test("an expired certificate is reported as expired, with its date; nothing is dropped")
    func expiredReported() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(caFile: pki.caCertificate, clientCertificateFile: nil, clientKeyFile: nil)
        try await Self.run(pki: pki, certificate: pki.expired, tls: tls) { engine, log, collector in
            let reason = try await Self.expectRefused(engine, log, collector)
            #expect(reason.contains("the collector's certificate expired at "), "\(reason)")
            #expect(!reason.contains("unknown CA"), "\(reason)")
        }
    }

    @Test("a certificate for another host name is refused as a wrong host name")
    func wrongHostRefused() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(caFile: pki.caCertificate, clientCertificateFile: nil, clientKeyFile: nil)
        try await Self.run(pki: pki, certificate: pki.wrongHost, tls: tls) { engine, log, collector in
            let reason = try await Self.expectRefused(engine, log, collector)
            #expect(reason.contains("wrong host name"), "\(reason)")
        }
    }

    @Test("mTLS: a collector with a client CA refuses an agent without a client certificate")
    func mutualTLSWithoutCertificateRefused() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(caFile: pki.caCertificate, clientCertificateFile: nil, clientKeyFile: nil)
        try await Self.run(pki: pki, certificate: pki.server, clientCA: pki.caCertificate, tls: tls) {
            engine,
            log,
            collector in
            let reason = try await Self.expectRefused(engine, log, collector)
            // The collector's own certificate is fine: the reason must not blame it.
            #expect(reason.hasPrefix("TLS handshake failed: "), "\(reason)")
            #expect(!reason.contains("unknown CA") && !reason.contains("expired"), "\(reason)")
        }
    }

    @Test("mTLS: with a client certificate from the client CA, entries are accepted")
    func mutualTLSWithCertificateAccepted() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(
            caFile: pki.caCertificate,
            clientCertificateFile: pki.client.certificate,
            clientKeyFile: pki.client.key
        )
        try await Self.run(pki: pki, certificate: pki.server, clientCA: pki.caCertificate, tls: tls) {
            engine,
            log,
            collector in
            try await Self.expectDelivered(engine, log, collector)
        }
    }

    @Test("a TLS key file that group or others can read is refused, on both ends")
    func unsafeKeyFilesRefused() throws {
        let pki = try TestPKI.shared.get()
        let directory = try TemporaryDirectory(prefix: "tls-keys")
        let clientKey = directory.path + "/client.key"
        let serverKey = directory.path + "/server.key"
        try FileManager.default.copyItem(atPath: pki.client.key, toPath: clientKey)
        try FileManager.default.copyItem(atPath: pki.server.key, toPath: serverKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: clientKey)
        #expect(throws: SyncTLS.Failure.self) {
            try SyncTLS(caFile: nil, clientCertificateFile: pki.client.certificate, clientKeyFile: clientKey)
        }
        // The same files with mode 0600 are taken.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: clientKey)
        _ = try SyncTLS(caFile: nil, clientCertificateFile: pki.client.certificate, clientKeyFile: clientKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: serverKey)
        var configuration = CollectorConfiguration(databasePath: directory.path + "/c.db")
        configuration.tlsCertificateFile = pki.server.certificate
        configuration.tlsKeyFile = serverKey
        #expect(throws: CollectorError.self) { try configuration.makeTLS() }
    }
}
