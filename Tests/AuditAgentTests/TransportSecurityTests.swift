import AuditAgent
import AuditCollector
import Foundation
import Testing
import TestKit

/// The built `auditd`: plain HTTP off loopback is refused at start by both programs unless allowed explicitly, and
/// `auditd collector` re-reads its TLS certificate and key on SIGHUP (a bad file keeps the ones in use).
@Suite("Transport security", .serialized)
struct TransportSecurityTests {
    @Test("the agent refuses an http:// backend off loopback unless plain HTTP is allowed")
    func agentPlainHTTPRule() throws {
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["backend": "http://audit.invalid:8080"])
        }
        for backend in ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://audit.invalid"]
        {
            _ = try AgentConfiguration.resolve(environment: [:], flags: ["backend": backend])
        }
        let allowed = try AgentConfiguration.resolve(
            environment: ["AUDITD_ALLOW_PLAIN_HTTP": "true"],
            flags: ["backend": "http://audit.invalid:8080"]
        )
        #expect(allowed.allowPlainHTTP)
        do {
            _ = try AgentConfiguration.resolve(environment: [:], flags: ["backend": "http://10.0.0.1:8080"])
            Issue.record("a plain http backend on 10.0.0.1 was accepted")
        } catch {
            #expect(error.message.contains("--allow-plain-http"))
        }
    }

    @Test("auditd run exits 2 naming --allow-plain-http for an http:// backend off loopback")
    func agentBinaryRefusesPlainHTTP() async throws {
        let directory = try TemporaryDirectory(prefix: "plain-http")
        let result = try await AgentProducts.runAuditd(
            ["run", "--state-dir", directory.path + "/state", "--backend", "http://audit.invalid:8080"],
            timeout: .seconds(60)
        )
        #expect(result.exited && result.status == 2)
        #expect(result.stderr.contains("--allow-plain-http"), "\(result.stderr)")
    }

    @Test("auditd collector exits 2 naming --allow-plain-http on a non-loopback address without --tls-cert")
    func collectorBinaryRefusesPlainHTTP() async throws {
        let directory = try TemporaryDirectory(prefix: "plain-http")
        let result = try await AgentProducts.runAuditd(
            ["collector", "--db", directory.path + "/c.db", "--listen", "0.0.0.0:0"],
            timeout: .seconds(60)
        )
        #expect(result.exited && result.status == 2)
        #expect(result.stderr.contains("--allow-plain-http"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/c.db"))
    }

    @Test("SIGHUP: new connections get the re-read certificate; a bad file keeps the one in use and logs an error")
    func collectorReloadsOnSIGHUP() async throws {
        let pki = try TestPKI.shared.get()
        let directory = try TemporaryDirectory(prefix: "tls-reload")
        let certificate = directory.path + "/tls.pem"
        let key = directory.path + "/tls.key"
        func install(_ files: (certificate: String, key: String)) throws {
            try Data(contentsOf: URL(fileURLWithPath: files.certificate)).write(to: URL(fileURLWithPath: certificate))
            try Data(contentsOf: URL(fileURLWithPath: files.key)).write(to: URL(fileURLWithPath: key))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        }
        try install(pki.server)
        let child = try AgentProducts.startAuditd([
            "collector", "--db", directory.path + "/c.db", "--listen", "127.0.0.1:0", "--tls-cert", certificate,
            "--tls-key", key,
        ])
        defer { child.send(SIGKILL) }
        var port: Int?
        _ = await pollUntil {
            let text = child.errors
            if let range = text.range(of: "listening on 127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            return port != nil || !child.isRunning
        }
        let bound = try #require(port)
        #expect(pki.presentedIssuer(port: bound)?.contains("Audit Test CA") == true)

        try install(pki.otherCA)
        child.send(SIGHUP)
        let reloaded = await pollUntil {
            pki.presentedIssuer(port: bound)?.contains("Other Test CA") == true
        }
        #expect(reloaded)

        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: certificate))
        child.send(SIGHUP)
        let logged = await pollUntil { child.errors.contains("TLS reload failed") }
        #expect(logged, "\(child.errors)")
        #expect(child.isRunning)
        #expect(pki.presentedIssuer(port: bound)?.contains("Other Test CA") == true)
        #expect(!child.errors.contains("PRIVATE KEY"))
        child.send(SIGTERM)
    }
}
