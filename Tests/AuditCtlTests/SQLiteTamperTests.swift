import AuditChain
import Foundation
import GRDB
import Testing
import TestKit

/// Tampering with the SQLite file directly is detected and localized by `auditctl verify`.
@Suite("Tampering with the database")
struct SQLiteTamperTests {
    let directory: TemporaryDirectory
    let state: String

    init() async throws {
        directory = try TemporaryDirectory()
        state = directory.path + "/state"
        try await CLIHarness.initWithSixEvents(state)
    }

    func edit(_ change: (Database) throws -> Void) throws {
        let queue = try DatabaseQueue(path: state + "/log.sqlite")
        try queue.writeWithoutTransaction { try change($0) }
    }

    func bytes(_ db: Database, _ seq: Int) throws -> [UInt8] {
        Array(try Data.fetchOne(db, sql: "SELECT bytes FROM entries WHERE seq = ?", arguments: [seq])!)
    }

    func store(_ db: Database, _ seq: Int, _ bytes: [UInt8]) throws {
        try db.execute(sql: "UPDATE entries SET bytes = ? WHERE seq = ?", arguments: [Data(bytes), seq])
    }

    /// `auditctl verify --json` → (exit status, ["seq:kind"]).
    func verify(_ extra: [String] = []) async throws -> (Int32, [String]) {
        let result = try await CLIHarness.auditctl(state, ["verify", "--json"] + extra)
        guard case .array(let problems)? = try JSONValue(parsing: Array(result.stdout.utf8)).objectValue?["problems"]
        else {
            return (result.status, [])
        }
        let findings = problems.compactMap { problem -> String? in
            guard let seq = problem.objectValue?["seq"]?.integerValue,
                let kind = problem.objectValue?["kind"]?.stringValue
            else { return nil }
            return "\(seq):\(kind)"
        }
        return (result.status, findings)
    }

    @Test("one changed byte of a sealed payload is reported at its entry")
    func changedPayloadByte() async throws {
        try edit { db in
            var entry = try bytes(db, 3)
            entry[160] ^= 0x20
            try store(db, 3, entry)
        }
        let (status, findings) = try await verify()
        #expect(status == 1)
        #expect(findings == ["3:payloadModified"])
        #expect(try await verify(["--fast"]).1 == ["3:payloadModified"])
    }

    @Test("a deleted row is reported missing")
    func deletedRow() async throws {
        try edit { try $0.execute(sql: "DELETE FROM entries WHERE seq = 4") }
        #expect(try await verify() == (1, ["4:missing"]))
    }

    @Test("log lists from a chain that verifies: a deleted row is said before and after the listing, exit 1")
    func logOverBrokenChain() async throws {
        let intact = try await CLIHarness.auditctl(state, ["log", "--format", "jsonl", "--user", "user"])
        #expect(intact.status == 0 && !intact.stderr.contains("does not hold"), "\(intact.stderr)")
        #expect(intact.stdout.split(separator: "\n").count == 6)
        try edit { try $0.execute(sql: "DELETE FROM entries WHERE seq = 4") }
        // The filtered view hides nothing silently (CVE-2023-31437): the entries it shows come from a broken chain.
        let filtered = try await CLIHarness.auditctl(state, ["log", "--format", "jsonl", "--user", "user"])
        #expect(filtered.status == 1, "\(filtered.stderr)")
        #expect(filtered.stdout.split(separator: "\n").count == 5)
        let said = filtered.stderr.components(separatedBy: "the log's chain does not hold").count - 1
        #expect(said == 2, "\(filtered.stderr)")
        #expect(filtered.stderr.contains("seq 4") && filtered.stderr.contains("auditctl verify"), "\(filtered.stderr)")
        // A range that does not reach the damage is still listed from the damaged chain.
        let range = try await CLIHarness.auditctl(state, ["log", "--to-seq", "2"])
        #expect(range.status == 1 && range.stderr.contains("the log's chain does not hold"), "\(range.stderr)")
    }

    @Test("two rows with swapped payloads are both reported")
    func swappedPayloads() async throws {
        try edit { db in
            var two = try bytes(db, 2)
            var five = try bytes(db, 5)
            #expect(two.count == five.count)
            let region = 140..<(two.count - 64)  // nonce and payload
            let saved = Array(two[region])
            two.replaceSubrange(region, with: five[region])
            five.replaceSubrange(region, with: saved)
            try store(db, 2, two)
            try store(db, 5, five)
        }
        #expect(try await verify() == (1, ["2:payloadModified", "5:payloadModified"]))
    }

    @Test("a row moved to another seq is reported misfiled, and appends refuse to continue from it")
    func movedRow() async throws {
        try edit { try $0.execute(sql: "UPDATE entries SET seq = 10 WHERE seq = 6") }
        #expect(try await verify() == (1, ["6:misfiled"]))
        #expect(try await verify(["--fast"]) == (1, ["6:misfiled"]))
        let emit = try await CLIHarness.auditctl(
            state,
            [
                "emit", "--type", "BIOMETRIC_AUTH_SUCCESS", "--user", "u", "--device", "d", "--attr",
                "unlockDurationMs=1",
            ]
        )
        #expect(emit.status == 2)
        #expect(emit.stderr.contains("cannot append after the newest entry (seq 10)"), "\(emit.stderr)")
    }

    @Test("verify needs neither the log's metadata nor its private keys, only the entries and trusted public keys")
    func verifyWithoutMetadataOrKeys() async throws {
        let publicKeys = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
        try edit { try $0.execute(sql: "DELETE FROM metadata") }
        let emit = try await CLIHarness.auditctl(state, ["stats"])
        #expect(emit.status == 2)
        #expect(emit.stderr.contains("its metadata has no log id: the database was altered"), "\(emit.stderr)")
        #expect(try await verify() == (0, []))
        try FileManager.default.removeItem(atPath: state + "/keys")
        let unpinned = try await CLIHarness.auditctl(state, ["verify"])
        #expect(unpinned.status == 2)
        #expect(unpinned.stderr.contains("pin the public keys with --public-key"))
        try edit { db in
            var entry = try bytes(db, 3)
            entry[160] ^= 0x20
            try store(db, 3, entry)
        }
        #expect(try await verify(["--public-key", publicKeys]) == (1, ["3:payloadModified"]))
    }

    @Test("a bundle file cut after its header is reported truncated through the seq its header announces")
    func cutBundleFile() async throws {
        let bundle = directory.path + "/part.bundle"
        // --to past the head announces the head (6), not 40; and it carries no checkpoint (none is stored).
        let export = try await CLIHarness.auditctl(state, ["export", "--out", bundle, "--to", "40"])
        #expect(export.stdout.contains("exported 7 entries (seq 0...6)"), "\(export.stdout)")
        #expect(try await verify(["--bundle", bundle]) == (0, []))
        let lines = try String(contentsOfFile: bundle, encoding: .utf8).split(separator: "\n")
        try (lines.dropLast(2).joined(separator: "\n") + "\n").write(toFile: bundle, atomically: true, encoding: .utf8)
        let result = try await CLIHarness.auditctl(state, ["verify", "--bundle", bundle, "--json"])
        #expect(result.status == 1)
        #expect(result.stdout.contains(#""kind":"truncated","lastSeq":6,"seq":5"#), "\(result.stdout)")
        #expect(result.stdout.contains("the entries end at 4 but the header announces entries through seq 6"))
    }

    @Test("two swapped rows are reported as reordered")
    func swappedRows() async throws {
        try edit { db in
            let two = try bytes(db, 2)
            let three = try bytes(db, 3)
            try store(db, 2, three)
            try store(db, 3, two)
        }
        let (status, findings) = try await verify()
        #expect(status == 1)
        #expect(findings.contains("2:reordered"))
    }

    @Test("newest rows deleted are reported truncated: by the log's stored checkpoint, or by one kept elsewhere")
    func truncatedTail() async throws {
        let checkpoint = directory.path + "/checkpoint.json"
        #expect(try await CLIHarness.auditctl(state, ["checkpoint", "--out", checkpoint]).status == 0)
        try edit { try $0.execute(sql: "DELETE FROM entries WHERE seq >= 5") }
        #expect(try await verify() == (1, ["5:truncated"]))
        // Whoever can delete rows can delete the stored checkpoint too: then only the one kept elsewhere tells.
        try edit { try $0.execute(sql: "DELETE FROM metadata WHERE key = 'checkpoint'") }
        #expect(try await verify() == (0, []))
        let (status, findings) = try await verify(["--checkpoint", checkpoint])
        #expect(status == 1)
        #expect(findings == ["5:truncated"])
    }

    @Test(
        "after a cut tail, emit exits 2 naming it and writes nothing; export still writes a bundle that shows the cut"
    )
    func appendAfterCutTail() async throws {
        #expect(try await CLIHarness.auditctl(state, ["checkpoint", "--out", directory.path + "/cp.json"]).status == 0)
        try edit { try $0.execute(sql: "DELETE FROM entries WHERE seq >= 5; DELETE FROM delivery WHERE seq >= 5") }
        let emit = try await CLIHarness.auditctl(
            state,
            [
                "emit", "--type", "BIOMETRIC_AUTH_SUCCESS", "--user", "u", "--device", "d", "--attr",
                "unlockDurationMs=1",
            ]
        )
        #expect(emit.status == 2)
        #expect(
            emit.stderr.contains("the log ends at seq 4, but it reached seq 7 (its last checkpoint)"),
            "\(emit.stderr)"
        )
        #expect(emit.stderr.contains("Appends are refused so that no sequence number is used twice"))
        #expect(try await verify() == (1, ["5:truncated"]))
        let stats = try await CLIHarness.auditctl(state, ["stats"])
        #expect(stats.status == 0)
        #expect(
            stats.stdout.hasPrefix("appends refused: the log ends at seq 4, but it reached seq 7"),
            "\(stats.stdout)"
        )

        let bundle = directory.path + "/cut.bundle"
        let export = try await CLIHarness.auditctl(state, ["export", "--out", bundle])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("exported 5 entries (seq 0...4)"), "\(export.stdout)")
        #expect(export.stderr.contains("warning: no fresh checkpoint"))
        #expect(export.stderr.contains("the bundle carries the latest stored checkpoint (seq 7)"))
        #expect(try await verify(["--bundle", bundle]) == (1, ["5:truncated"]))
    }
}
