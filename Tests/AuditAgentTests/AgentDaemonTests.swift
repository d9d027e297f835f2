import AuditAgent
import AuditChain
import AuditStore
import Foundation
import TestKit
import GRDB
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `auditd` binary: default subcommand, log creation, SIGTERM, exit codes.
@Suite struct AgentDaemonTests {
    /// Waits (bounded) until `condition` holds.
    static func eventually(_ timeout: Duration = .seconds(300), _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test func emptyStateDirectoryThenSIGTERMExitsZeroAndRemovesTheSocket() async throws {
        let dir = try AgentTempDir()
        let state = dir.file("state")
        let socket = state + "/ingest.sock"
        // No subcommand: `run` is the default.
        let child = try AgentProducts.startAuditd(["--state-dir", state, "--shutdown-timeout-seconds", "10"])
        let up = try await Self.eventually {
            var info = stat()
            return stat(socket, &info) == 0 && info.st_mode & 0o777 == 0o660
        }
        #expect(up)
        if up {
            let reply = try await AgentHTTPClient(target: .unix(socket)).post("/v1/events", AgentHarness.event())
            #expect(reply.status == 200)
            #expect(reply.json["seqs"] as? [Int] == [1])
        }
        child.send(SIGTERM)
        let result = try await child.wait(timeout: .seconds(300))
        #expect(result.exited)
        #expect(result.status == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(result.stderr.contains("created a new audit log"))
        #expect(result.stderr.contains("delivery is off"))
        #expect(result.stderr.contains("level=info"))
        let log = try AgentHarness.openLog(state)
        // The event at seq 1, the close record of the clean stop at seq 2 (format version 2, the agent's default).
        #expect(try AgentHarness.headSeq(log) == 2)
    }

    @Test("a log whose newest rows were deleted: the agent says so at start, and answers each event 503")
    func cutLogIsReportedAtStart() async throws {
        let dir = try AgentTempDir()
        let state = StateDirectory(path: dir.file("state"))
        try state.create()
        let log = try await AuditLog.create(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
            deviceId: "d"
        )
        let event = AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
            userId: "alice",
            deviceId: "phone-1",
            attributes: ["unlockDurationMs": .integer(412)],
            idempotencyKey: "k1"
        )
        _ = try await log.append([event])
        _ = try await log.writeCheckpoint()
        var busy = Configuration()
        busy.busyMode = .timeout(30)  // the log's background checkpointer may hold the file for a moment
        let queue = try DatabaseQueue(path: state.databasePath, configuration: busy)
        try await queue.write {
            try $0.execute(sql: "DELETE FROM entries WHERE seq >= 1; DELETE FROM delivery WHERE seq >= 1")
        }
        try queue.close()

        let socket = state.path + "/ingest.sock"
        let child = try AgentProducts.startAuditd(["--state-dir", state.path, "--shutdown-timeout-seconds", "10"])
        let up = try await Self.eventually { FileManager.default.fileExists(atPath: socket) }
        #expect(up)
        if up {
            let reply = try await AgentHTTPClient(target: .unix(socket)).post("/v1/events", AgentHarness.event())
            #expect(reply.status == 503)
        }
        child.send(SIGTERM)
        let result = try await child.wait(timeout: .seconds(300))
        #expect(result.status == 0)
        #expect(result.stderr.contains("level=critical"), "\(result.stderr)")
        #expect(result.stderr.contains("the audit log refuses appends"))
        #expect(result.stderr.contains("the log ends at seq 0, but it reached seq 2 (its last checkpoint)"))
        #expect(try AgentHarness.headSeq(AgentHarness.openLog(state.path)) == 0)
    }

    @Test func tokenFileReadableByOthersExitsTwo() async throws {
        let dir = try AgentTempDir()
        let token = dir.file("token")
        try Data("s3cret-token".utf8).write(to: URL(fileURLWithPath: token))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: token)
        let result = try await AgentProducts.runAuditd([
            "run", "--state-dir", dir.file("state"), "--backend", "http://127.0.0.1:9", "--token-file", token,
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("chmod 600"))
        #expect(!result.stderr.contains("s3cret-token"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("state")))
    }

    @Test func badConfigurationExitsTwoWithAMessage() async throws {
        let dir = try AgentTempDir()
        let remote = try await AgentProducts.runAuditd(["--state-dir", dir.file("s"), "--listen", "10.1.2.3:8470"])
        #expect(remote.status == 2)
        #expect(remote.stderr.contains("not a loopback address"))
        let malformed = try await AgentProducts.runAuditd(["run", "--state-dir", dir.file("s"), "--max-events", "x"])
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("--max-events"))
        let usage = try await AgentProducts.runAuditd(["run", "--no-such-flag"])
        #expect(usage.status == 2)
    }

    @Test func versionAndTopLevelHelpPointToTheSettings() async throws {
        let version = try await AgentProducts.runAuditd(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == PackageVersion.current + "\n")
        let help = try await AgentProducts.runAuditd(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("auditd run --help"))
    }

    @Test func helpListsEverySettingFlag() async throws {
        let help = try await AgentProducts.runAuditd(["run", "--help"])
        #expect(help.status == 0)
        for setting in AgentSetting.all {
            #expect(help.stdout.contains(setting.flag), "\(setting.flag) missing from auditd run --help")
        }
        #expect(help.stdout.contains("--config"))
    }
}
