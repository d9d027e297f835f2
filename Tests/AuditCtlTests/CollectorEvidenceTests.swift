import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Testing
import TestKit

/// The downloads of the collector's pages (docs/COLLECTOR-UI.md section 1), checked offline by the built `auditctl`:
/// an incident's evidence bundle by `verify --bundle` (both entries for one position are signed by the device, and the
/// verifier reports the fork), an entry's `.tlog-proof` file by `verify-proof`.
@Suite struct CollectorEvidenceTests {
    @Test func aForksEvidenceBundleIsCheckedByAuditctlVerify() async throws {
        let directory = CollectorTempDir()
        var configuration = directory.configuration()
        configuration.port = 0
        configuration.token = "ingest"
        configuration.publicRead = true
        let server = try await CollectorServer(configuration: configuration)
        let fixture = UIFleetFixture()
        let state = try TemporaryDirectory(prefix: "evidence")
        let bundle = state.path + "/evidence.bundle"
        try await serveGracefully(server) { port in
            try await fixture.post(to: CollectorClient(port: port, token: "ingest"))
            let client = AgentHTTPClient(target: .tcp(port))
            let log = Hex.encode(fixture.forked.logId)
            let page = try JSONValue(parsing: try await client.get("/ui/logs/\(log).json").body)
            guard case .array(let incidents)? = page.objectValue?["incidents"],
                let path = incidents.first?.objectValue?["evidence"]?.stringValue
            else {
                Issue.record("no incident on the log's page")
                return
            }
            let reply = try await client.get(path)
            #expect(reply.status == 200)
            try Data(reply.body).write(to: URL(fileURLWithPath: bundle))
        }
        await server.collector.store.close()
        let result = try await CLIHarness.auditctl(state.path + "/state", ["verify", "--bundle", bundle, "--json"])
        #expect(result.status != 0, "\(result.stdout)")
        let report = try JSONValue(parsing: Array(result.stdout.utf8)).objectValue
        #expect(report?["ok"] == .bool(false))
        guard case .array(let problems)? = report?["problems"] else {
            Issue.record("no problems: \(result.stdout) \(result.stderr)")
            return
        }
        // Every signature checks (the device signed both entries); the one problem is the fork at seq 2.
        #expect(report?["signaturesChecked"] == .integer(3))
        #expect(problems.count == 1)
        let problem = problems.first?.objectValue
        #expect(problem?["kind"] == .string("duplicate"))
        #expect(problem?["seq"] == .integer(2))
        #expect(problem?["detail"]?.stringValue?.contains("fork") == true)
    }

    @Test func aProofFileFromThePagesIsCheckedByAuditctlVerifyProof() async throws {
        let directory = CollectorTempDir()
        var configuration = directory.configuration()
        configuration.port = 0
        configuration.token = "ingest"
        configuration.publicRead = true
        let server = try await CollectorServer(configuration: configuration)
        let fixture = UIFleetFixture()
        let files = try TemporaryDirectory(prefix: "proof")
        let proof = files.path + "/entry.tlog-proof"
        let deviceKey = files.path + "/device.json"
        try Data(PublicKeyFile.render(logId: fixture.bridged.logId, keys: [fixture.bridged.signingKey.publicKey]))
            .write(to: URL(fileURLWithPath: deviceKey))
        let collectorKey = files.path + "/collector.key"
        try Data(CollectorPublicKey.json(server.collector.receiptKey.publicKey).canonicalBytes + [0x0A])
            .write(to: URL(fileURLWithPath: collectorKey))
        try await serveGracefully(server) { port in
            try await fixture.post(to: CollectorClient(port: port, token: "ingest"))
            let log = Hex.encode(fixture.bridged.logId)
            let reply = try await AgentHTTPClient(target: .tcp(port)).get("/ui/logs/\(log)/proof.tlog-proof?seq=5")
            #expect(reply.status == 200)
            try Data(reply.body).write(to: URL(fileURLWithPath: proof))
        }
        await server.collector.store.close()
        let result = try await CLIHarness.run(
            "auditctl",
            ["verify-proof", proof, "--collector-key", collectorKey, "--public-key", deviceKey, "--json"]
        )
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    }
}
