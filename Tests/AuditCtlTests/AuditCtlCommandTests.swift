import AuditChain
import Foundation
import Testing
import AuditStore
import TestKit

/// End-to-end tests of the built `auditctl` binary: outputs and exit codes of every command.
@Suite("auditctl commands")
struct AuditCtlCommandTests {
    let directory: TemporaryDirectory
    let state: String

    init() throws {
        directory = try TemporaryDirectory()
        state = directory.path + "/state"
    }

    func initialize() async throws {
        let result = try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    func emitSome() async throws {
        let lines = [
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","attributes":{"unlockDurationMs":412}}"#,
            #"{"type":"BIOMETRIC_AUTH_FAILURE","userId":"bob","deviceId":"phone-1","attributes":{"attemptCount":1,"errorCode":"ERR-107-030"},"occurredAt":"2026-11-21T10:00:00Z","idempotencyKey":"fixed-key"}"#,
            #"{"type":"PASSWORD_AUTH_FALLBACK","userId":"bob","deviceId":"phone-1","attributes":{"reason":"LOCKOUT"}}"#,
        ]
        let result = try await CLIHarness.auditctl(
            state,
            ["emit", "--input", "-"],
            stdin: lines.joined(separator: "\n") + "\n"
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 3)
    }

    @Test("init, emit, log, show, stats, verify: outputs and exit code 0")
    func happyPath() async throws {
        try await initialize()
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: state + "/keys")
        #expect(keyFiles.count == 2)
        for file in keyFiles {
            let mode =
                try FileManager.default.attributesOfItem(atPath: state + "/keys/" + file)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        try await emitSome()
        let flagEmit = try await CLIHarness.auditctl(
            state,
            [
                "emit", "--type", "BIOMETRIC_ENABLED", "--user", "carol", "--device", "phone-1", "--attr",
                "biometryType=faceId",
            ]
        )
        #expect(flagEmit.status == 0)
        #expect(flagEmit.stdout.hasPrefix("appended seq 4 "))

        let encrypted = try await CLIHarness.auditctl(state, ["log"])
        #expect(encrypted.status == 0)
        #expect(encrypted.stdout.contains("use --decrypt"))
        #expect(!encrypted.stdout.contains("alice"))

        let decrypted = try await CLIHarness.auditctl(state, ["log", "--decrypt", "--json"])
        let rows = try JSONValue(parsing: Array(decrypted.stdout.utf8))
        guard case .array(let entries) = rows else {
            Issue.record("log --json is not an array")
            return
        }
        #expect(entries.count == 5)
        let types = entries.compactMap { $0.objectValue?["event"]?.objectValue?["type"]?.stringValue }
        #expect(
            types == [
                "BIOMETRIC_AUTH_SUCCESS", "BIOMETRIC_AUTH_FAILURE", "PASSWORD_AUTH_FALLBACK", "BIOMETRIC_ENABLED",
            ]
        )

        let filtered = try await CLIHarness.auditctl(
            state,
            ["log", "--type", "PASSWORD_AUTH_FALLBACK", "--decrypt", "--limit", "1"]
        )
        #expect(filtered.stdout.split(separator: "\n").count == 1)
        #expect(filtered.stdout.contains("LOCKOUT"))
        let since = try await CLIHarness.auditctl(state, ["log", "--since", "2999-01-01T00:00:00Z"])
        #expect(since.status == 0 && since.stdout.isEmpty)

        let show = try await CLIHarness.auditctl(state, ["show", "2", "--decrypt", "--json"])
        let shown = try JSONValue(parsing: Array(show.stdout.utf8)).objectValue
        #expect(shown?["event"]?.objectValue?["idempotencyKey"] == "fixed-key")
        #expect(shown?["seq"] == 2)

        let stats = try await CLIHarness.auditctl(state, ["stats", "--json"])
        let statsJSON = try JSONValue(parsing: Array(stats.stdout.utf8)).objectValue
        #expect(statsJSON?["entries"] == 5)
        #expect(statsJSON?["types"]?.objectValue?["BIOMETRIC_AUTH_FAILURE"] == 1)

        let verify = try await CLIHarness.auditctl(state, ["verify", "--decrypt"])
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("OK: 5 entries"))
        let verifyJSON = try await CLIHarness.auditctl(state, ["verify", "--json", "--fast"])
        #expect(verifyJSON.status == 0)
        let summary = try JSONValue(parsing: Array(verifyJSON.stdout.utf8)).objectValue
        #expect(summary?["ok"] == .bool(true) && summary?["problems"] == .array([]) && summary?["entries"] == 5)
    }

    @Test("bad input exits 2 naming the line and field, and writes nothing")
    func badInput() async throws {
        try await initialize()
        let lines = """
            {"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","attributes":{"unlockDurationMs":1}}
            {"type":"BIOMETRIC_AUTH_FAILURE","userId":"bob","deviceId":"phone-1","attributes":{"attemptCount":0,"errorCode":"E"}}
            """
        let result = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: lines)
        #expect(result.status == 2)
        #expect(result.stderr.contains("line 2"))
        #expect(result.stderr.contains("attributes.attemptCount"))
        #expect(try CLIHarness.openLog(state).storage.size().count == 1)

        let cases: [[String]] = [
            ["emit", "--type", "NOPE", "--user", "u", "--device", "d"],
            ["emit", "--type", "BIOMETRIC_ENABLED", "--user", "u", "--device", "d", "--attr", "pin=1234"],
            ["emit", "--type", "BIOMETRIC_ENABLED", "--user", "u"],
            ["emit", "--type", "BIOMETRIC_ENABLED", "--user", "u", "--device", "d", "--attr", "novalue"],
            ["log", "--since", "yesterday"],
            ["show", "999"],
            ["no-such-command"],
            ["init"],
        ]
        for arguments in cases {
            let bad = try await CLIHarness.auditctl(state, arguments)
            #expect(bad.status == 2, "\(arguments): \(bad.stdout) \(bad.stderr)")
            #expect(!bad.stderr.isEmpty, "\(arguments) printed no error")
        }
        #expect(try CLIHarness.openLog(state).storage.size().count == 1)
        let secret = try await CLIHarness.auditctl(
            state,
            [
                "emit", "--type", "BIOMETRIC_ENABLED", "--user", "u", "--device", "d", "--attr", "biometryType=x",
                "--attr", "pin=1234",
            ]
        )
        #expect(secret.stderr.contains("secret"))
    }

    @Test("two inits racing on one state directory: one log, one pair of keys, the loser exits 2 saying a log exists")
    func initRace() async throws {
        for round in 0..<6 {
            let racedState = directory.path + "/raced-\(round)"
            async let first = CLIHarness.auditctl(racedState, ["init", "--device-id", "first"])
            async let second = CLIHarness.auditctl(racedState, ["init", "--device-id", "second"])
            let results = try await [first, second]
            #expect(results.map(\.status).sorted() == [0, 2], "\(results.map(\.stderr))")
            let loser = try #require(results.first { $0.status != 0 })
            // Never SQLite's "database is locked": the open waits for the other process's switch to WAL.
            #expect(loser.stderr.contains("already"), "\(loser.stderr)")
            let keys = try FileManager.default.contentsOfDirectory(atPath: racedState + "/keys")
            #expect(keys.count == 2, "\(keys)")
            let verified = try await CLIHarness.auditctl(racedState, ["verify"])
            #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        }
    }

    @Test(
        "init creates a state directory whose parents are missing, every one private (0700); a file in the way exits 2"
    )
    func initCreatesMissingParents() async throws {
        let nested = directory.path + "/demo/nested/cli"
        let created = try await CLIHarness.auditctl(nested, ["init", "--device-id", "phone-1"])
        #expect(created.status == 0, "\(created.stderr)")
        for path in [directory.path + "/demo", directory.path + "/demo/nested", nested] {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(path)")
        }
        let verified = try await CLIHarness.auditctl(nested, ["verify"])
        #expect(verified.status == 0, "\(verified.stderr)")

        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: directory.path + "/file"))
        let blocked = try await CLIHarness.auditctl(directory.path + "/file/cli", ["init", "--device-id", "phone-1"])
        #expect(blocked.status == 2)
        #expect(blocked.stderr.contains("cannot create directory"), "\(blocked.stderr)")
    }

    @Test("a missing state directory, a missing key, a wrong key and unsafe permissions exit 2 with a clear message")
    func keyProblems() async throws {
        let missing = try await CLIHarness.auditctl(state, ["verify"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("auditctl init"))

        try await initialize()
        let keys = state + "/keys"
        let signing = try #require(
            try FileManager.default.contentsOfDirectory(atPath: keys).first { $0.hasPrefix("signing-") }
        )
        chmod(keys + "/" + signing, 0o644)
        let unsafe = try await CLIHarness.auditctl(
            state,
            ["emit", "--type", "MASTER_PIN_SET", "--user", "u", "--device", "d"]
        )
        #expect(unsafe.status == 2)
        #expect(unsafe.stderr.contains("chmod 600"))

        chmod(keys + "/" + signing, 0o600)
        let original = try Data(contentsOf: URL(fileURLWithPath: keys + "/" + signing))
        try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: keys + "/" + signing))
        let wrong = try await CLIHarness.auditctl(
            state,
            ["emit", "--type", "MASTER_PIN_SET", "--user", "u", "--device", "d"]
        )
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("holds key"))

        try original.write(to: URL(fileURLWithPath: keys + "/" + signing))
        try FileManager.default.moveItem(atPath: keys + "/" + signing, toPath: directory.path + "/moved.key")
        let gone = try await CLIHarness.auditctl(
            state,
            ["emit", "--type", "MASTER_PIN_SET", "--user", "u", "--device", "d"]
        )
        #expect(gone.status == 2)
        #expect(gone.stderr.contains("missing"))
    }

    @Test("keys rotate, show and export-public; old events stay readable; verify with the exported keys")
    func keys() async throws {
        try await initialize()
        try await emitSome()
        let rotate = try await CLIHarness.auditctl(state, ["keys", "rotate", "--reason", "test"])
        #expect(rotate.status == 0, "\(rotate.stderr)")
        try await emitSome()
        let show = try await CLIHarness.auditctl(state, ["keys", "show", "--json"])
        let shown = try JSONValue(parsing: Array(show.stdout.utf8)).objectValue
        guard case .array(let signing)? = shown?["signingKeys"], case .array(let data)? = shown?["dataKeyIds"] else {
            Issue.record("keys show --json lacks keys")
            return
        }
        #expect(signing.count == 2 && data.count == 2)
        let publicFile = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicFile]).status == 0)
        let verify = try await CLIHarness.auditctl(state, ["verify", "--public-key", publicFile, "--decrypt"])
        #expect(verify.status == 0, "\(verify.stdout)")
        // The second emit repeats the "fixed-key" event, a retry across the rotation: five events, not six.
        #expect(verify.stdout.contains("5 payloads opened"))
    }

    @Test("a range export after a key rotation carries the rotation, and verifies with the genesis key pinned")
    func rangeExportAfterRotation() async throws {
        try await initialize()
        try await emitSome()
        let genesisKey = directory.path + "/genesis.json"
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", genesisKey]).status == 0)
        #expect(try await CLIHarness.auditctl(state, ["keys", "rotate"]).status == 0)
        try await emitSome()
        let ranged = directory.path + "/after-rotation.jsonl"
        // seq 4 is the rotation: the range starts after it.
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", ranged, "--from", "6"]).status == 0)
        let lines = try String(contentsOfFile: ranged, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains(#""seq":4"#) })
        let elsewhere = directory.path + "/empty-state"
        let verified = try await CLIHarness.auditctl(
            elsewhere,
            ["verify", "--bundle", ranged, "--public-key", genesisKey]
        )
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        #expect(!verified.stdout.contains("unknownKey"))
    }

    @Test("export writes a bundle that verify --bundle checks offline with public keys only")
    func exportBundle() async throws {
        try await initialize()
        try await emitSome()
        let bundle = directory.path + "/bundle.jsonl"
        let publicFile = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", bundle]).status == 0)
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicFile]).status == 0)
        let elsewhere = directory.path + "/empty-state"
        let offline = try await CLIHarness.auditctl(
            elsewhere,
            ["verify", "--bundle", bundle, "--public-key", publicFile]
        )
        #expect(offline.status == 0, "\(offline.stdout) \(offline.stderr)")

        let ranged = directory.path + "/range.jsonl"
        #expect(
            try await CLIHarness.auditctl(state, ["export", "--out", ranged, "--from", "2", "--to", "3"]).status == 0
        )
        #expect(
            try await CLIHarness.auditctl(elsewhere, ["verify", "--bundle", ranged, "--public-key", publicFile]).status
                == 0
        )

        var lines = try String(contentsOfFile: bundle, encoding: .utf8).split(separator: "\n").map(String.init)
        lines.remove(at: 3)  // drop the entry line of seq 2
        let cut = directory.path + "/cut.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: cut, atomically: true, encoding: .utf8)
        let tampered = try await CLIHarness.auditctl(
            elsewhere,
            ["verify", "--bundle", cut, "--public-key", publicFile, "--json"]
        )
        #expect(tampered.status == 1)
        #expect(tampered.stdout.contains(#""kind":"missing""#))
        #expect(tampered.stdout.contains(#""seq":2"#))

        let stranger = directory.path + "/stranger.json"
        let other = directory.path + "/other"
        #expect(try await CLIHarness.auditctl(other, ["init"]).status == 0)
        #expect(try await CLIHarness.auditctl(other, ["keys", "export-public", "--out", stranger]).status == 0)
        let wrongKey = try await CLIHarness.auditctl(
            elsewhere,
            ["verify", "--bundle", bundle, "--public-key", stranger, "--json"]
        )
        #expect(wrongKey.status == 1)
        #expect(wrongKey.stdout.contains("unknownKey"))
    }
}
