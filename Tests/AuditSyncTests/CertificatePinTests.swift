import AuditChain
import AuditCollector
import AuditServerKit
import AuditStore
import AuditHTTPClient
import AuditSync
import AuditWire
import Foundation
import NIOSSL
import Testing
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// Pinning the collector's key (RFC 7469 pin-sha256 of the leaf certificate's SubjectPublicKeyInfo) on the
/// connection that carries each request, besides the CA: delivery over HTTPS to an in-process collector serving
/// certificates of the test PKI made by `openssl`, with pins computed by `openssl` as docs/PROTOCOL.md says.
@Suite("Certificate pins", .serialized)
struct CertificatePinTests {
    /// Runs `body` with an HTTPS collector serving `certificate`; it gets the port and the collector.
    static func withCollector(
        _ certificate: (certificate: String, key: String),
        clientCA: String? = nil,
        idleTimeout: Duration? = nil,
        _ body: (Int, Collector, String) async throws -> Void
    ) async throws {
        let directory = CollectorTempDir()
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.port = 0
        configuration.tlsCertificateFile = certificate.certificate
        configuration.tlsKeyFile = certificate.key
        configuration.clientCAFile = clientCA
        if let idleTimeout { configuration.limits.idleTimeout = idleTimeout }
        let server = try await CollectorServer(configuration: configuration)
        try await serveGracefully(server) { port in try await body(port, server.collector, directory.path) }
    }

    /// A fresh log and an engine delivering it to `https://127.0.0.1:port` with `tls`.
    static func engine(
        port: Int,
        tls: SyncTLS,
        directory: String
    ) async throws -> (SyncEngine, AuditLog, HTTPSyncTransport) {
        let state = StateDirectory(path: directory + "/agent-\(UUID().uuidString.prefix(8))")
        try state.create()
        let log = try await AuditLog.create(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
            deviceId: "device-tls"
        )
        let transport = HTTPSyncTransport(
            backend: URL(string: "https://127.0.0.1:\(port)")!,
            token: nil,
            timeout: .seconds(300),
            tls: tls
        )
        let clocks = ManualClocks(monotonic: .seconds(1000), wall: Int64(Date().timeIntervalSince1970 * 1000))
        return (try SyncEngine(log: log, transport: transport, clocks: clocks.clocks), log, transport)
    }

    /// The test CA trusted, and `pins` (base64).
    static func tls(_ pki: TestPKI, pins: [String], caFile: String? = nil) throws -> SyncTLS {
        try SyncTLS(
            caFile: caFile ?? pki.caCertificate,
            clientCertificateFile: nil,
            clientKeyFile: nil,
            pins: Set(try pins.map { try CertificatePin(base64: $0) })
        )
    }

    /// Appends 5 entries to a log delivered before; expects them all delivered and covered by a verified receipt.
    static func expectDeliveredAgain(_ engine: SyncEngine, _ log: AuditLog, _ collector: Collector) async throws {
        try await TLSDeliveryTests.append(log, 5)
        let report = try await engine.cycle()
        #expect(report.failure == nil, "\(report.failure ?? "")")
        #expect(report.delivered == 5)
        let info = try log.info()
        #expect(try log.storage.deliveryTable().items.isEmpty)
        #expect(try await collector.store.entries(logId: info.logId).count == Int(info.head.seq) + 1)
        #expect(try DeliveryStatus.read(log.storage).receiptSeq == info.head.seq)
    }

    @Test("the pin openssl computes as documented is the one the agent computes from the certificate")
    func opensslAgrees() throws {
        let pki = try TestPKI.shared.get()
        for file in [pki.server.certificate, pki.caCertificate, pki.otherCA.certificate] {
            let certificate = try #require(try NIOSSLCertificate.fromPEMFile(file).first)
            #expect(try CertificatePin(certificate: certificate).description == pki.pin(of: file))
        }
        // The server's key and the CA's differ, so their pins do.
        #expect(try pki.pin(of: pki.server.certificate) != pki.pin(of: pki.caCertificate))
    }

    @Test(
        "a pin is the padded standard base64 of 32 bytes, nothing else",
        arguments: [
            "", "abc", String(repeating: "A", count: 43), String(repeating: "A", count: 43) + "==",
            String(repeating: "A", count: 44), "sha256/" + String(repeating: "A", count: 43) + "=",
            String(repeating: "_", count: 43) + "=", " " + String(repeating: "A", count: 43) + "=",
            Data(repeating: 7, count: 31).base64EncodedString(), Data(repeating: 7, count: 33).base64EncodedString(),
        ]
    )
    func malformedPinsRefused(text: String) {
        #expect(throws: SyncTLS.Failure.self) { try CertificatePin(base64: text) }
    }

    @Test("a well-formed pin reads back as written")
    func wellFormedPin() throws {
        let text = Data((0..<32).map { UInt8($0 * 7 & 0xff) }).base64EncodedString()
        #expect(try CertificatePin(base64: text).description == text)
        #expect(try CertificatePin(base64: text).digest.count == 32)
    }

    @Test("the collector's key pinned: the key fetched at first contact, entries accepted, receipts verified")
    func rightPinDelivers() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try Self.tls(pki, pins: [pki.pin(of: pki.server.certificate)])
        try await Self.withCollector(pki.server) { port, collector, directory in
            let (engine, log, transport) = try await Self.engine(port: port, tls: tls, directory: directory)
            #expect(await transport.collectorKey() != nil)
            try await TLSDeliveryTests.expectDelivered(engine, log, collector)
            // A second cycle on the kept-alive connection.
            try await Self.expectDeliveredAgain(engine, log, collector)
            #expect(await transport.isReachable())
        }
    }

    @Test("a backup pin beside the right one: one match is enough")
    func oneOfSeveralPins() async throws {
        let pki = try TestPKI.shared.get()
        let pins = [try pki.pin(of: pki.otherCA.certificate), try pki.pin(of: pki.server.certificate)]
        try await Self.withCollector(pki.server) { port, collector, directory in
            let (engine, log, _) = try await Self.engine(
                port: port,
                tls: try Self.tls(pki, pins: pins),
                directory: directory
            )
            try await TLSDeliveryTests.expectDelivered(engine, log, collector)
        }
    }

    @Test("a wrong pin: refused as a pin mismatch naming the key seen; nothing dropped, the probe fails too")
    func wrongPinRefused() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try Self.tls(pki, pins: [pki.pin(of: pki.otherCA.certificate)])
        let seen = try pki.pin(of: pki.server.certificate)
        try await Self.withCollector(pki.server) { port, collector, directory in
            let (engine, log, transport) = try await Self.engine(port: port, tls: tls, directory: directory)
            let reason = try await TLSDeliveryTests.expectRefused(engine, log, collector)
            #expect(reason.contains("certificate pin mismatch"), "\(reason)")
            #expect(reason.contains(seen), "\(reason)")
            // Every request is pinned: the first-contact key fetch and the reachability probe as well.
            #expect(await transport.collectorKey() == nil)
            #expect(await !transport.isReachable())
            #expect(try DeliveryStatus.read(log.storage).receiptSeq == nil)
        }
    }

    @Test("the CA's key pinned is not enough: the pin must be the collector's own (leaf) key")
    func caPinRefused() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try Self.tls(pki, pins: [pki.pin(of: pki.caCertificate)])
        try await Self.withCollector(pki.server) { port, collector, directory in
            let (engine, log, _) = try await Self.engine(port: port, tls: tls, directory: directory)
            let reason = try await TLSDeliveryTests.expectRefused(engine, log, collector)
            #expect(reason.contains("certificate pin mismatch"), "\(reason)")
        }
    }

    @Test("pins narrow the CA's trust, never widen it: a pinned key under an untrusted CA is an unknown CA")
    func pinDoesNotReplaceTrust() async throws {
        let pki = try TestPKI.shared.get()
        let pin = try pki.pin(of: pki.otherCA.certificate)
        try await Self.withCollector(pki.otherCA) { port, collector, directory in
            // The test CA does not sign it; the system's roots do not either.
            for tls in [
                try Self.tls(pki, pins: [pin]),
                try SyncTLS(
                    caFile: nil,
                    clientCertificateFile: nil,
                    clientKeyFile: nil,
                    pins: [try CertificatePin(base64: pin)]
                ),
            ] {
                let (engine, log, _) = try await Self.engine(port: port, tls: tls, directory: directory)
                let reason = try await TLSDeliveryTests.expectRefused(engine, log, collector)
                #expect(reason.contains("unknown CA"), "\(reason)")
                #expect(!reason.contains("pin"), "\(reason)")
            }
        }
        // The host name is checked too: a pinned key in a certificate for another name is refused.
        let wrongHostPin = try pki.pin(of: pki.wrongHost.certificate)
        try await Self.withCollector(pki.wrongHost) { port, collector, directory in
            let (engine, log, _) = try await Self.engine(
                port: port,
                tls: try Self.tls(pki, pins: [wrongHostPin]),
                directory: directory
            )
            let reason = try await TLSDeliveryTests.expectRefused(engine, log, collector)
            #expect(reason.contains("wrong host name"), "\(reason)")
        }
    }

    @Test("mTLS with a pin: the client certificate is presented on the pinned connection")
    func mutualTLSWithPin() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try SyncTLS(
            caFile: pki.caCertificate,
            clientCertificateFile: pki.client.certificate,
            clientKeyFile: pki.client.key,
            pins: [try CertificatePin(base64: pki.pin(of: pki.server.certificate))]
        )
        try await Self.withCollector(pki.server, clientCA: pki.caCertificate) { port, collector, directory in
            let (engine, log, _) = try await Self.engine(port: port, tls: tls, directory: directory)
            try await TLSDeliveryTests.expectDelivered(engine, log, collector)
        }
    }

    @Test("a kept-alive connection the collector closed (its idle deadline) is replaced; delivery goes on")
    func idleConnectionReplaced() async throws {
        let pki = try TestPKI.shared.get()
        let tls = try Self.tls(pki, pins: [pki.pin(of: pki.server.certificate)])
        try await Self.withCollector(pki.server, idleTimeout: .milliseconds(300)) {
            port,
            collector,
            directory in
            let (engine, log, _) = try await Self.engine(port: port, tls: tls, directory: directory)
            try await TLSDeliveryTests.expectDelivered(engine, log, collector)
            // Past the collector's idle deadline: the connection kept for the next request is closed by now.
            try await Task.sleep(for: .seconds(1))
            try await Self.expectDeliveredAgain(engine, log, collector)
        }
    }

    @Test("a collector that accepts the connection and never completes the handshake: the request's timeout")
    func handshakeTimeout() async throws {
        let pki = try TestPKI.shared.get()
        // A listening socket nobody accepts on: the kernel completes TCP, no TLS answer ever comes.
        let (fd, port) = try SyncFaultSocket.listen(port: 0)
        defer { close(fd) }
        let transport = HTTPSyncTransport(
            backend: URL(string: "https://127.0.0.1:\(port)")!,
            token: nil,
            timeout: .seconds(1),
            tls: try Self.tls(pki, pins: [pki.pin(of: pki.server.certificate)])
        )
        let batch = SyncBatch(
            logId: Array(repeating: 1, count: 16),
            batchId: "pin-timeout",
            entries: [],
            checkpoint: nil
        )
        // The handshake never ends: only the request's timeout can end the send, and it says so.
        let outcome = await transport.send(batch)
        #expect(outcome == .failure("timeout"), "\(outcome)")
    }
}
