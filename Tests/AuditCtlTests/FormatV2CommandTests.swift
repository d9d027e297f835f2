import AuditChain
import Foundation
import GRDB
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
            Issue.record("no signingKeys")
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

    @Test("log on a version 2 log: an unsigned entry's payload changed in the database is said, exit 1")
    func logOverAlteredUnsignedEntry() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--format-version", "2"]).status == 0)
        // One commit of three events: seq 1 and 2 are unsigned, covered by the signature of seq 3.
        let lines = Array(repeating: Self.event, count: 3).joined(separator: "\n")
        #expect(try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: lines).status == 0)
        let intact = try await CLIHarness.auditctl(state, ["log", "--kind", "event"])
        #expect(intact.status == 0, "\(intact.stderr)")
        let database = try DatabaseQueue(path: state + "/log.sqlite")
        try await database.write { db in
            var bytes = Array(try #require(try Data.fetchOne(db, sql: "SELECT bytes FROM entries WHERE seq = 2")))
            #expect(!SealedEntry.carriesSignature(serialized: bytes))
            bytes[bytes.count - 2] ^= 0x01  // the payload's tag: no signature of its own to fail
            try db.execute(sql: "UPDATE entries SET bytes = ? WHERE seq = 2", arguments: [Data(bytes)])
        }
        let altered = try await CLIHarness.auditctl(state, ["log", "--kind", "event", "--format", "jsonl"])
        #expect(altered.status == 1, "\(altered.stderr)")
        #expect(altered.stderr.contains("the log's chain does not hold"), "\(altered.stderr)")
        #expect(altered.stderr.contains("seq 2"), "\(altered.stderr)")
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
