import AuditWire
import Foundation
import TestKit
import Testing

/// `auditd collector --read-token-file` and `--public-read` (docs/COLLECTOR-API.md section 2), end to end.
@Suite struct CollectorReadFlagsTests {
    @Test("--public-read with --read-token-file exits 2 with a clear error before creating anything")
    func bothFlagsAreRefusedAtStart() async throws {
        let directory = try AgentTempDir()
        let token = directory.file("read-token")
        try PrivateFile.create(token, bytes: Array("reader\n".utf8))
        let result = try await AgentProducts.runAuditd([
            "collector", "--db", directory.file("collector.db"), "--listen", "127.0.0.1:0", "--public-read",
            "--read-token-file", token,
        ])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("--public-read") && result.stderr.contains("--read-token-file"),
            "\(result.stderr)"
        )
        #expect(!FileManager.default.fileExists(atPath: directory.file("collector.db")))
        #expect(!FileManager.default.fileExists(atPath: directory.file("collector.db.collector.key")))
    }

    @Test("a read token file others can read exits 2 and names the fix, never the token")
    func aLooseReadTokenFileIsRefused() async throws {
        let directory = try AgentTempDir()
        let token = directory.file("read-token")
        try Data("s3cret-reader".utf8).write(to: URL(fileURLWithPath: token))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: token)
        let result = try await AgentProducts.runAuditd([
            "collector", "--db", directory.file("collector.db"), "--listen", "127.0.0.1:0", "--read-token-file", token,
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("chmod 600"), "\(result.stderr)")
        #expect(!result.stderr.contains("s3cret-reader"))
    }

    @Test("auditd collector --help lists both flags")
    func helpListsTheFlags() async throws {
        let help = try await AgentProducts.runAuditd(["collector", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--read-token-file") && help.stdout.contains("--public-read"), "\(help.stdout)")
    }
}
