import AuditChain
import AuditCollector
import Foundation
import Testing
import TestKit

/// The evidence of an incident, downloaded from the collector's pages (docs/COLLECTOR-UI.md section 1), is a bundle
/// that the built `auditctl verify --bundle` checks offline: both entries for one position are signed by the device,
/// and the verifier reports the contradiction.
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
}
