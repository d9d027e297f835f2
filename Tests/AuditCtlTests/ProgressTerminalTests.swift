import AuditChain
import AuditStore
import Foundation
import TestKit
import Testing

/// util-linux `script`, which runs a command under a pseudo-terminal.
private let scriptPath = "/usr/bin/script"

/// The progress line of the long commands (`verify`, `log`, local and bundle), seen through a pseudo-terminal
/// (util-linux `script`): drawn when standard error is a terminal, never without one, never with `--json`, and for
/// `log` never while its output goes to the terminal too. Skipped without `script`, except under `CI`, where it
/// then fails (as the README test does without its tools): CI must show this requirement.
@Suite(
    "auditctl progress on a terminal",
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: scriptPath)
            || ProcessInfo.processInfo.environment["CI"] != nil,
        "no util-linux script"
    )
)
struct ProgressTerminalTests {
    static let script = scriptPath
    let directory: TemporaryDirectory
    let state: String

    init() throws {
        directory = try TemporaryDirectory()
        state = directory.path + "/state"
    }

    /// A log of 1500 events (more than one progress step of 1024), its bundle and its public keys.
    func makeLog() async throws -> (bundle: String, publicKeys: String) {
        let log = try await StateDirectory(path: state).createLog(deviceId: "device")
        for start in stride(from: 0, to: 1500, by: 250) {
            _ = try await log.append((start..<start + 250).map { LogFixture.event($0) })
        }
        let bundle = directory.path + "/log.bundle"
        let publicKeys = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", bundle]).status == 0)
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
        // Over the 1 MiB that bundle readers take at a time: lines are cut across chunks (LineReader).
        let size = try FileManager.default.attributesOfItem(atPath: bundle)[.size] as? Int ?? 0
        #expect(size > 1 << 20, "\(size)")
        return (bundle, publicKeys)
    }

    /// Runs `auditctl ARGUMENTS` in a shell under a pseudo-terminal (standard error, and standard output unless
    /// `redirect` sends it elsewhere); the terminal's output and the exit status.
    func inTerminal(_ arguments: [String], redirect: String = "") async throws -> (status: Int32, output: String) {
        let command = ([CLIHarness.path("auditctl")] + arguments).map { "'\($0)'" }.joined(separator: " ") + redirect
        var environment = ProcessInfo.processInfo.environment
        environment["AUDIT_STATE_DIR"] = nil
        let childEnvironment = environment
        return try await CLIHarness.offPool {
            let result = try ChildProcess.run(
                Self.script,
                ["-qec", command, "/dev/null"],
                environment: childEnvironment,
                stdin: nil,
                timeout: 120
            )
            return (result.status, String(decoding: result.stdout, as: UTF8.self))
        }
    }

    @Test("verify and log, of the local log and of a bundle, draw rate and ETA on a terminal's standard error")
    func drawnOnTerminal() async throws {
        let (bundle, publicKeys) = try await makeLog()
        let verify = try await inTerminal(["verify", "--state-dir", state])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(verify.output.contains("verify: 1024/"), "\(verify.output)")
        #expect(verify.output.contains("entries ("), "\(verify.output)")
        #expect(verify.output.contains("/s, ETA "), "\(verify.output)")
        #expect(verify.output.contains("OK"), "\(verify.output)")

        let verifyBundle = try await inTerminal(["verify", "--bundle", bundle, "--public-key", publicKeys])
        #expect(verifyBundle.status == 0, "\(verifyBundle.output)")
        #expect(verifyBundle.output.contains("verify: 1024/"), "\(verifyBundle.output)")

        let log = try await inTerminal(["log", "--format", "jsonl", "--state-dir", state], redirect: " > /dev/null")
        #expect(log.status == 0, "\(log.output)")
        #expect(log.output.contains("log: 1024/"), "\(log.output)")

        let logBundle = try await inTerminal(
            ["log", "--decrypt", "--bundle", bundle, "--public-key", publicKeys, "--state-dir", state],
            redirect: " > /dev/null"
        )
        #expect(logBundle.status == 0, "\(logBundle.output)")
        #expect(logBundle.output.contains("log: 1024/"), "\(logBundle.output)")

        let export = try await inTerminal(["export", "--out", directory.path + "/again.bundle", "--state-dir", state])
        #expect(export.status == 0, "\(export.output)")
        #expect(export.output.contains("export: 1024/"), "\(export.output)")
        let exportJSON = try await inTerminal(
            ["export", "--json", "--out", directory.path + "/json.bundle", "--state-dir", state]
        )
        #expect(exportJSON.status == 0 && !exportJSON.output.contains("export: "), "\(exportJSON.output)")

        // simulate counts sessions against users × sessions; the first one drawn is at once.
        let simulate = try await inTerminal(["simulate", "--users", "2", "--sessions", "3", "--state-dir", state])
        #expect(simulate.status == 0, "\(simulate.output)")
        #expect(simulate.output.contains("simulate: 0/6 sessions"), "\(simulate.output)")
    }

    @Test("no progress without a terminal, with --json, or when log's output is on the terminal")
    func notDrawn() async throws {
        let (bundle, publicKeys) = try await makeLog()
        // Standard error a pipe.
        for arguments in [["verify"], ["log", "--format", "jsonl"]] {
            let result = try await CLIHarness.auditctl(state, arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("entries"), "\(arguments): \(result.stderr)")
        }
        let piped = try await CLIHarness.run("auditctl", ["verify", "--bundle", bundle, "--public-key", publicKeys])
        #expect(piped.status == 0 && !piped.stderr.contains("entries"), "\(piped.stderr)")

        // A terminal, but --json.
        for arguments in [["verify", "--json"], ["log", "--json"]] {
            let result = try await inTerminal(arguments + ["--state-dir", state], redirect: " > /dev/null")
            #expect(result.status == 0, "\(arguments): \(result.output)")
            #expect(!result.output.contains("1024/"), "\(arguments): \(result.output)")
        }
        // log with its output on the terminal: the lines are the progress.
        let shown = try await inTerminal(["log", "--state-dir", state])
        #expect(shown.status == 0)
        #expect(shown.output.contains("use --decrypt>"), "\(shown.output.suffix(300))")
        #expect(!shown.output.contains("log: 1024/"))
    }
}
