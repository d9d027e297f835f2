import AuditChain
import Foundation
import Testing
import TestKit

/// The commands on a format version 2 log (docs/FORMAT.md, section 13): `init --format-version 2`, epochs that end
/// on a write after their time, `keys show` with the ended epochs' private keys gone, `verify --json`'s version 2
/// members and `--as-of`, `keys upgrade` of a version 1 log.
@Suite("auditctl on format version 2")
struct FormatV2CommandTests {
    static let event =
        #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"user","deviceId":"d","attributes":{"unlockDurationMs":120}}"#

    static func signingKeyFiles(_ state: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: state + "/keys").filter { $0.hasPrefix("signing-") }
    }

    @Test("init, emit past an epoch's end, keys show, export-public, verify: one key file, the chain verifies")
    func lifecycle() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        let initialized = try await CLIHarness.auditctl(
            state,
            ["init", "--format-version", "2", "--epoch-seconds", "1", "--json"]
        )
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: Self.event).status == 0)
        // The epoch is 1 s long: the next write ends it (a wait, not a bound on anything).
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: Self.event).status == 0)
        #expect(try Self.signingKeyFiles(state).count == 1)

        let shown = try await CLIHarness.auditctl(state, ["keys", "show", "--json"])
        let keys = try #require(try JSONValue(parsing: Array(shown.stdout.utf8)).objectValue)
        #expect(keys["formatVersion"] == .integer(2))
        #expect((keys["epoch"]?.integerValue ?? 0) >= 1)
        guard case .array(let signingKeys)? = keys["signingKeys"] else {
            Issue.record("keys show --json lists no signingKeys")
            return
        }
        #expect(signingKeys.count == 2)
        #expect(keys["activeSigningKeyId"]?.stringValue != nil)

        let publicKeys = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
        let verified = try await CLIHarness.auditctl(state, ["verify", "--json", "--public-key", publicKeys])
        #expect(verified.status == 0, "\(verified.stdout)")
        let summary = try #require(try JSONValue(parsing: Array(verified.stdout.utf8)).objectValue)
        #expect(summary["formatVersion"] == .integer(2))
        #expect((summary["epochs"]?.integerValue ?? 0) >= 2)
        #expect(summary["closed"] == .bool(false) && summary["unsealedTail"] == .integer(0))
        #expect(summary["lastEpochTime"]?.stringValue != nil)

        // Judged a day later, the open log has no recent epoch record: openEnd, exit 1.
        let later = try await CLIHarness.auditctl(
            state,
            ["verify", "--json", "--as-of", "2099-01-01T00:00:00.000Z"]
        )
        #expect(later.status == 1 && later.stdout.contains("openEnd"))
        let bad = try await CLIHarness.auditctl(state, ["verify", "--as-of", "yesterday"])
        #expect(bad.status == 2 && bad.stderr.contains("--as-of"))
    }

    @Test("keys upgrade: refused without its confirmation; then the version 1 keys are erased and the log verifies")
    func upgrade() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try await CLIHarness.initWithSixEvents(state)
        #expect(try await CLIHarness.auditctl(state, ["keys", "rotate"]).status == 0)
        let publicKeys = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
        #expect(try Self.signingKeyFiles(state).count == 2)

        let refused = try await CLIHarness.auditctl(state, ["keys", "upgrade"])
        #expect(refused.status == 2 && refused.stderr.contains("--erase-retired-keys"))
        #expect(try Self.signingKeyFiles(state).count == 2)

        let upgraded = try await CLIHarness.auditctl(state, ["keys", "upgrade", "--erase-retired-keys", "--json"])
        #expect(upgraded.status == 0, "\(upgraded.stderr)")
        #expect(upgraded.stdout.contains("\"formatVersion\":2"))
        #expect(try Self.signingKeyFiles(state).count == 1)
        #expect(try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: Self.event).status == 0)
        // The keys exported before the upgrade still verify the whole log: the chain introduces the new one.
        let verified = try await CLIHarness.auditctl(state, ["verify", "--json", "--public-key", publicKeys])
        #expect(verified.status == 0, "\(verified.stdout)")
        #expect(verified.stdout.contains("\"formatVersion\":2"))
        let again = try await CLIHarness.auditctl(state, ["keys", "upgrade", "--erase-retired-keys"])
        #expect(again.status != 0)
    }
}
