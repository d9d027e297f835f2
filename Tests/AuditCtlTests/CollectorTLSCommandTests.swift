import AuditChain
import AuditCollector
import AuditStore
import AuditWire
import Crypto
import Foundation
import TestKit
import Testing
import TransparencyLog

/// `auditctl prove` and `verify-consistency --collector` against an HTTPS collector (in process, on an ephemeral
/// port) serving a certificate of the test PKI: `--ca-file` trusts its private CA, `--pin-sha256` pins its key,
/// `--tls-client-cert`/`--tls-client-key` answer a collector that requires mTLS; what does not hold is refused with
/// exit 2 and a reason.
@Suite("auditctl against an HTTPS collector", .serialized)
struct CollectorTLSCommandTests {
    /// Runs `body` with an HTTPS collector holding the fixture's entries; it gets the URL and the collector.
    static func withHTTPSCollector(
        _ fixture: ProofFixture,
        clientCA: String? = nil,
        _ body: (String, Collector) async throws -> Void
    ) async throws {
        let pki = try TestPKI.shared.get()
        let directory = CollectorTempDir()
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.port = 0
        configuration.tlsCertificateFile = pki.server.certificate
        configuration.tlsKeyFile = pki.server.key
        configuration.clientCAFile = clientCA
        let server = try await CollectorServer(configuration: configuration)
        try await serveGracefully(server) { port in
            let entries = try fixture.entries.map { try SealedEntry(serialized: $0) }
            let response = try await server.collector.ingest(CollectorChain.batch(logId: fixture.logId, entries))
            #expect(response.results.allSatisfy { $0.status == .accepted })
            try await body("https://127.0.0.1:\(port)", server.collector)
        }
    }

    /// The collector's receipt key as 64 hex digits, in a file.
    static func keyFile(_ fixture: ProofFixture, _ collector: Collector) throws -> String {
        let hex = Hex.encode(collector.receiptKey.privateKey.publicKey.rawRepresentation)
        return try fixture.write(Array(hex.utf8), "collector-hex.key")
    }

    @Test("prove with --ca-file writes the proof; without it the collector's CA is unknown (exit 2)")
    func proveOverHTTPS() async throws {
        let pki = try TestPKI.shared.get()
        let fixture = try await ProofFixture.make(events: 5)
        try await Self.withHTTPSCollector(fixture) { url, collector in
            let key = try Self.keyFile(fixture, collector)
            func prove(_ extra: [String]) async throws -> CLIHarness.Result {
                try await CLIHarness.run(
                    "auditctl",
                    [
                        "prove", "--collector", url, "--state-dir", fixture.state, "--seq", "3", "--collector-key", key,
                        "--out", fixture.path("seq3-\(UUID().uuidString.prefix(6)).proof"),
                    ] + extra
                )
            }
            let proved = try await prove(["--ca-file", pki.caCertificate])
            #expect(proved.status == 0, "\(proved.stdout) \(proved.stderr)")
            #expect(proved.stdout.contains("entry seq 3 is leaf 3 of "), "\(proved.stdout)")

            let untrusted = try await prove([])
            #expect(untrusted.status == 2)
            #expect(untrusted.stderr.contains("unknown CA"), "\(untrusted.stderr)")

            let pinned = try await prove([
                "--ca-file", pki.caCertificate, "--pin-sha256", pki.pin(of: pki.server.certificate),
            ])
            #expect(pinned.status == 0, "\(pinned.stdout) \(pinned.stderr)")

            let caPin = try pki.pin(of: pki.caCertificate)
            let mismatch = try await prove(["--ca-file", pki.caCertificate, "--pin-sha256", caPin])
            #expect(mismatch.status == 2)
            #expect(mismatch.stderr.contains("certificate pin mismatch"), "\(mismatch.stderr)")
            #expect(mismatch.stderr.contains(try pki.pin(of: pki.server.certificate)), "\(mismatch.stderr)")

            let malformed = try await prove(["--ca-file", pki.caCertificate, "--pin-sha256", "abc"])
            #expect(malformed.status == 2)
            #expect(malformed.stderr.contains("is not a pin-sha256"), "\(malformed.stderr)")
        }
    }

    @Test("verify-consistency --collector over HTTPS with --ca-file and a pin")
    func verifyConsistencyOverHTTPS() async throws {
        let pki = try TestPKI.shared.get()
        let fixture = try await ProofFixture.make(events: 5)
        try await Self.withHTTPSCollector(fixture) { url, collector in
            let key = try Self.keyFile(fixture, collector)
            let old = try #require(try await collector.signedCheckpoint(logId: fixture.logId))
            let oldFile = try fixture.write(old.bytes, "old.checkpoint")
            let log = try CLIHarness.openLog(fixture.state)
            _ = try await log.append([LogFixture.event(100), LogFixture.event(101)])
            let more = try log.storage.entries(from: 6, through: 7, limit: 2).map {
                try SealedEntry(serialized: $0.bytes)
            }
            _ = try await collector.ingest(CollectorChain.batch(logId: fixture.logId, more))
            let new = try #require(try await collector.signedCheckpoint(logId: fixture.logId))
            let newFile = try fixture.write(new.bytes, "new.checkpoint")
            let consistent = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-consistency", oldFile, newFile, "--collector-key", key, "--collector", url, "--ca-file",
                    pki.caCertificate, "--pin-sha256", pki.pin(of: pki.server.certificate),
                ]
            )
            #expect(consistent.status == 0, "\(consistent.stdout) \(consistent.stderr)")
            #expect(consistent.stdout.contains("extends size 6"), "\(consistent.stdout)")
            let untrusted = try await CLIHarness.run(
                "auditctl",
                ["verify-consistency", oldFile, newFile, "--collector-key", key, "--collector", url]
            )
            #expect(untrusted.status == 2)
            #expect(untrusted.stderr.contains("unknown CA"), "\(untrusted.stderr)")
            // TLS options without a collector to ask, and a pin for plain http, are usage errors.
            let noCollector = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-consistency", oldFile, newFile, "--collector-key", key, "--proof", oldFile, "--ca-file",
                    pki.caCertificate,
                ]
            )
            #expect(noCollector.status == 2)
            #expect(noCollector.stderr.contains("go with --collector"), "\(noCollector.stderr)")
            let plain = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-consistency", oldFile, newFile, "--collector-key", key, "--collector",
                    "http://127.0.0.1:9", "--pin-sha256", pki.pin(of: pki.server.certificate),
                ]
            )
            #expect(plain.status == 2)
            #expect(plain.stderr.contains("plain http"), "\(plain.stderr)")
        }
    }

    @Test("a collector that requires mTLS: prove presents --tls-client-cert, and fails without it")
    func proveWithClientCertificate() async throws {
        let pki = try TestPKI.shared.get()
        let fixture = try await ProofFixture.make(events: 3)
        try await Self.withHTTPSCollector(fixture, clientCA: pki.caCertificate) { url, collector in
            let key = try Self.keyFile(fixture, collector)
            let arguments = [
                "prove", "--collector", url, "--state-dir", fixture.state, "--seq", "1", "--collector-key", key,
                "--out", fixture.path("seq1.proof"), "--ca-file", pki.caCertificate,
            ]
            let refused = try await CLIHarness.run("auditctl", arguments)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("TLS"), "\(refused.stderr)")
            let proved = try await CLIHarness.run(
                "auditctl",
                arguments + ["--tls-client-cert", pki.client.certificate, "--tls-client-key", pki.client.key]
            )
            #expect(proved.status == 0, "\(proved.stdout) \(proved.stderr)")
        }
    }
}
