import AuditChain
import AuditStore
import Foundation
import TestKit
import Testing

/// The shape of `auditctl` (issue 24): --version, the catalogue command, "did you mean", global options before the
/// subcommand, emit's --input and --json, completion scripts.
@Suite("auditctl shape")
struct CLIShapeTests {
    static let event =
        #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","#
        + #""attributes":{"unlockDurationMs":412}}"#

    @Test("--version prints the package's version")
    func version() async throws {
        let result = try await CLIHarness.run("auditctl", ["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == PackageVersion.current + "\n")
    }

    @Test("catalogue lists the types with their attributes, as text and JSON, with a deployment's file")
    func catalogue() async throws {
        let text = try await CLIHarness.run("auditctl", ["catalogue"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("BIOMETRIC_AUTH_SUCCESS  routine"))
        #expect(text.stdout.contains("unlockDurationMs  integer, required, >= 0"))
        #expect(text.stdout.contains("secret word"))

        let directory = try TemporaryDirectory()
        let file = directory.path + "/catalogue.json"
        let definitions =
            #"{"version": 1, "eventTypes": [{"type": "VAULT_EXPORTED", "priority": "critical", "#
            + #""attributes": {"note": {"type": "string", "required": false, "maxLength": 200}}}]}"#
        try Data(definitions.utf8).write(to: URL(fileURLWithPath: file))
        // The global option before the subcommand.
        let json = try await CLIHarness.run("auditctl", ["--catalogue", file, "catalogue", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let root = try #require(try JSONValue(parsing: Array(json.stdout.utf8)).objectValue)
        guard case .array(let types)? = root["eventTypes"] else {
            Issue.record("no eventTypes in \(json.stdout)")
            return
        }
        let byName = Dictionary(
            types.compactMap(\.objectValue).map { ($0["type"]?.stringValue ?? "", $0) },
            uniquingKeysWith: { first, _ in first }
        )
        let success = try #require(byName["BIOMETRIC_AUTH_SUCCESS"])
        #expect(success["priority"] == .string("routine") && success["source"] == .string("built-in"))
        #expect(
            success["attributes"]
                == .object([
                    "unlockDurationMs": .object(["type": "integer", "required": true, "minimum": 0]),
                    // Optional, filled by `auditd fprintd` (docs/PRODUCERS.md).
                    "finger": .object(["type": "string", "required": false, "minLength": 1, "maxLength": 64]),
                ])
        )
        let vault = try #require(byName["VAULT_EXPORTED"])
        #expect(vault["source"] == .string("file"))
        #expect(root["secretAttributeRule"]?.objectValue?["secretWords"] != nil)
    }

    @Test("global options before the subcommand; emit --input and --json output; a mistyped type gets a suggestion")
    func globalOptionsAndEmit() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        let initialized = try await CLIHarness.run(
            "auditctl",
            ["--state-dir", state, "init", "--device-id", "phone-1"]
        )
        #expect(initialized.status == 0, "\(initialized.stderr)")
        let simulated = try await CLIHarness.run(
            "auditctl",
            ["--state-dir=\(state)", "simulate", "--users", "2", "--sessions", "2", "--json"]
        )
        #expect(simulated.status == 0, "\(simulated.stderr)")
        #expect(simulated.stderr.isEmpty)

        let emitted = try await CLIHarness.run(
            "auditctl",
            ["--state-dir", state, "emit", "--input", "-", "--json"],
            stdin: Self.event
        )
        #expect(emitted.status == 0, "\(emitted.stderr)")
        let entries = try JSONValue(parsing: Array(emitted.stdout.utf8)).objectValue?["entries"]
        guard case .array(let list)? = entries, let first = list.first?.objectValue else {
            Issue.record("no entries in \(emitted.stdout)")
            return
        }
        #expect(list.count == 1 && first["duplicate"] == .bool(false) && first["seq"]?.integerValue != nil)

        // The old spelling: --json names the input; text output and a deprecation warning.
        let legacy = try await CLIHarness.auditctl(state, ["emit", "--json", "-"], stdin: Self.event)
        #expect(legacy.status == 0, "\(legacy.stderr)")
        #expect(legacy.stdout.hasPrefix("appended seq "))
        #expect(legacy.stderr.contains("deprecated") && legacy.stderr.contains("--input"))

        let mistyped = try await CLIHarness.auditctl(
            state,
            ["emit", "--type", "BIOMETRIC_AUTH_SUCESS", "--user", "alice", "--device", "phone-1"]
        )
        #expect(mistyped.status == 2)
        #expect(mistyped.stderr.contains("did you mean BIOMETRIC_AUTH_SUCCESS?"), "\(mistyped.stderr)")

        // A successful sync stores an empty last error: printed as null (as the agent's status does), not "".
        let log = try CLIHarness.openLog(state)
        try await log.deliveryTransaction(scope: .rows([])) { _, sealer in
            sealer.metadata[DeliveryStatus.Meta.lastError] = ""
        }
        let status = try await CLIHarness.run("auditctl", ["--state-dir", state, "queue", "status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let members = try #require(try JSONValue(parsing: Array(status.stdout.utf8)).objectValue)
        #expect(members["lastError"] == .null)
    }

    @Test("completion scripts for bash, zsh and fish name the subcommands")
    func completionScripts() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let result = try await CLIHarness.run("auditctl", ["--generate-completion-script", shell])
            #expect(result.status == 0, "\(shell): \(result.stderr)")
            #expect(result.stdout.contains("catalogue") && result.stdout.contains("simulate"), "\(shell)")
        }
    }

    @Test("scripts/install-completions installs both programs' completions for the three shells under --prefix")
    func installCompletions() async throws {
        let directory = try TemporaryDirectory()
        let script = ReadmeBlockTests.repository.path + "/scripts/install-completions"
        let installed = try await CLIHarness.offPool {
            try ChildProcess.run(
                "/bin/bash",
                [script, "--prefix", directory.path, "--bin", CLIHarness.productsDirectory],
                environment: ProcessInfo.processInfo.environment,
                stdin: nil,
                timeout: 120
            )
        }
        #expect(installed.status == 0, "\(String(decoding: installed.stderr, as: UTF8.self))")
        let share = directory.path + "/share"
        for tool in ["auditctl", "auditd"] {
            for path in [
                "/bash-completion/completions/\(tool)", "/zsh/site-functions/_\(tool)",
                "/fish/vendor_completions.d/\(tool).fish",
            ] {
                let text = try String(contentsOfFile: share + path, encoding: .utf8)
                #expect(text.contains(tool == "auditctl" ? "verify" : "collector"), "\(path)")
            }
        }
        let refused = try await CLIHarness.offPool {
            try ChildProcess.run(
                "/bin/bash",
                [script, "--prefix"],
                environment: ProcessInfo.processInfo.environment,
                stdin: nil,
                timeout: 60
            )
        }
        #expect(refused.status != 0)
    }
}
