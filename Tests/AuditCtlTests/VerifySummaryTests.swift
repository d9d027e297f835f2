import AuditChain
import Foundation
import GRDB
import Testing
import TestKit

/// `auditctl verify` leads with a summary (counts, head, accounted removals, problems), folds the repeats of one
/// cause, and checks the database's lookup columns.
@Suite("verify's summary")
struct VerifySummaryTests {
    let directory: TemporaryDirectory
    let state: String

    init() async throws {
        directory = try TemporaryDirectory()
        state = directory.path + "/state"
        try await CLIHarness.initWithSixEvents(state)
    }

    func edit(_ sql: String, arguments: StatementArguments = []) throws {
        let queue = try DatabaseQueue(path: state + "/log.sqlite")
        try queue.writeWithoutTransaction { try $0.execute(sql: sql, arguments: arguments) }
    }

    /// `auditctl verify --json` → (exit status, the summary's members).
    func verify(_ extra: [String] = [], in state: String? = nil) async throws -> (Int32, [String: JSONValue]) {
        let result = try await CLIHarness.auditctl(state ?? self.state, ["verify", "--json"] + extra)
        let summary = try JSONValue(parsing: Array(result.stdout.utf8)).objectValue
        return (result.status, summary ?? [:])
    }

    /// "seq:kind" or "seq-lastSeq:kind" of each problem.
    func problems(_ summary: [String: JSONValue]) -> [String] {
        guard case .array(let problems)? = summary["problems"] else { return ["no problems member"] }
        return problems.map { problem in
            let members = problem.objectValue ?? [:]
            let seq = members["seq"]?.integerValue ?? -1
            let last = members["lastSeq"]?.integerValue ?? -1
            let kind = members["kind"]?.stringValue ?? "?"
            return seq == last ? "\(seq):\(kind)" : "\(seq)-\(last):\(kind)"
        }
    }

    @Test("a good log: entries, signatures, payloads, log id, head seq and hash, no accounted removal, no problem")
    func goodLog() async throws {
        let (status, summary) = try await verify(["--decrypt"])
        #expect(status == 0)
        #expect(summary["ok"] == .bool(true))
        #expect(summary["mode"] == "full")
        #expect(summary["entries"] == 7)
        #expect(summary["signaturesChecked"] == 7)
        #expect(summary["payloadsOpened"] == 6)
        #expect(summary["logId"]?.stringValue?.count == 32)
        #expect(summary["head"]?.objectValue?["seq"] == 6)
        #expect(summary["head"]?.objectValue?["hash"]?.stringValue?.count == 64)
        #expect(summary["accounted"] == .array([]))
        #expect(summary["problems"] == .array([]))
        #expect(summary["pinnedLogId"] == nil)

        let fast = try await verify(["--fast"])
        #expect(fast.0 == 0 && fast.1["mode"] == "fast" && fast.1["payloadsOpened"] == 0)
        let text = try await CLIHarness.auditctl(state, ["verify"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("OK: 7 entries, 7 signatures checked (full), 0 payloads opened; head seq 6 "))
    }

    @Test("a tampered log: ok false, exit 1, each problem with its seq range, kind and detail")
    func tamperedLog() async throws {
        let queue = try DatabaseQueue(path: state + "/log.sqlite")
        try await queue.write { db in
            var entry = Array(try Data.fetchOne(db, sql: "SELECT bytes FROM entries WHERE seq = 3")!)
            entry[160] ^= 0x20
            try db.execute(sql: "UPDATE entries SET bytes = ? WHERE seq = 3", arguments: [Data(entry)])
            try db.execute(sql: "DELETE FROM entries WHERE seq = 5")
        }
        let (status, summary) = try await verify()
        #expect(status == 1)
        #expect(summary["ok"] == .bool(false))
        #expect(summary["entries"] == 6)
        #expect(summary["head"]?.objectValue?["seq"] == 6)
        #expect(problems(summary) == ["3:payloadModified", "5:missing"])
        guard case .array(let found)? = summary["problems"] else { return }
        #expect(found.first?.objectValue?["detail"]?.stringValue?.contains("payload") == true)
        let text = try await CLIHarness.auditctl(state, ["verify"])
        #expect(text.status == 1)
        #expect(text.stdout.contains("seq 3: payloadModified: "))
        #expect(text.stdout.contains("2 problem(s): 6 entries"), "\(text.stdout)")
    }

    @Test(
        "each lookup column changed with SQL is reported at its seq as lookupMismatch",
        arguments: [
            "UPDATE entries SET hash = zeroblob(32) WHERE seq = 4",
            "UPDATE entries SET kind = 2 WHERE seq = 4",
            "UPDATE entries SET time = time - 1000 WHERE seq = 4",
        ]
    )
    func lookupColumn(sql: String) async throws {
        #expect(try await verify().0 == 0)
        try edit(sql)
        let (status, summary) = try await verify()
        #expect(status == 1)
        #expect(problems(summary) == ["4:lookupMismatch"])
        let text = try await CLIHarness.auditctl(state, ["verify", "--fast"])
        #expect(text.status == 1)
        #expect(text.stdout.contains("seq 4: lookupMismatch: the storage's lookup columns"), "\(text.stdout)")
    }

    @Test("a bundle verified with another log's public key: one folded line naming both log ids")
    func anotherLogsKey() async throws {
        let bundle = directory.path + "/bundle.jsonl"
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", bundle]).status == 0)
        let other = directory.path + "/other"
        let stranger = directory.path + "/stranger.json"
        #expect(try await CLIHarness.auditctl(other, ["init"]).status == 0)
        #expect(try await CLIHarness.auditctl(other, ["keys", "export-public", "--out", stranger]).status == 0)
        let ownId = try await verify().1["logId"]?.stringValue ?? "own"
        let strangerId = try await verify(in: other).1["logId"]?.stringValue ?? "stranger"
        #expect(ownId != strangerId)

        let (status, summary) = try await verify(["--bundle", bundle, "--public-key", stranger])
        #expect(status == 1)
        #expect(summary["logId"]?.stringValue == ownId)
        #expect(summary["pinnedLogId"]?.stringValue == strangerId)
        // Every entry (the genesis, six events and the export's checkpoint record) in one line up front; the
        // bundle's detached checkpoint, signed by a key of this log too, is one more line of its own.
        #expect(problems(summary) == ["0-7:unknownKey", "7:checkpointMismatch"])
        guard case .array(let list)? = summary["problems"], let detail = list.first?.objectValue?["detail"]?.stringValue
        else { return }
        #expect(detail.hasPrefix("8 entries signed by "), "\(detail)")
        #expect(detail.hasSuffix("the pinned key file is for log \(strangerId), this bundle is log \(ownId)"))

        let text = try await CLIHarness.auditctl(state, ["verify", "--bundle", bundle, "--public-key", stranger])
        #expect(text.status == 1)
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(text.stdout)")
        #expect(lines.first?.hasPrefix("seq 0-7: unknownKey: 8 entries signed by ") == true, "\(text.stdout)")
        #expect(lines.first?.contains("this bundle is log \(ownId)") == true)
        #expect(lines.count { $0.contains("unknownKey") } == 1)
        #expect(lines.last?.hasPrefix("2 problem(s): 8 entries") == true)
    }

    @Test("the local log verified with another log's public key: one folded line naming both log ids")
    func localLogWithAnotherLogsKey() async throws {
        let other = directory.path + "/other"
        let stranger = directory.path + "/stranger.json"
        #expect(try await CLIHarness.auditctl(other, ["init"]).status == 0)
        #expect(try await CLIHarness.auditctl(other, ["keys", "export-public", "--out", stranger]).status == 0)
        let (status, summary) = try await verify(["--public-key", stranger])
        #expect(status == 1)
        #expect(problems(summary) == ["0-6:unknownKey"])
        #expect(summary["pinnedLogId"] != nil && summary["pinnedLogId"] != summary["logId"])
        guard case .array(let list)? = summary["problems"], let detail = list.first?.objectValue?["detail"]?.stringValue
        else { return }
        #expect(detail.hasSuffix("this log is log \(summary["logId"]?.stringValue ?? "?")"), "\(detail)")

        // A hand-written file of bare keys states no log id: the lines of one cause still fold, by their range.
        let keys = try JSONValue(parsing: Array(try String(contentsOfFile: stranger, encoding: .utf8).utf8))
        guard case .array(let listed)? = keys.objectValue?["keys"],
            let hex = listed.first?.objectValue?["publicKey"]?.stringValue
        else {
            Issue.record("no key in \(stranger)")
            return
        }
        let bare = directory.path + "/bare.keys"
        try (hex + "\n").write(toFile: bare, atomically: true, encoding: .utf8)
        let (bareStatus, bareSummary) = try await verify(["--public-key", bare])
        #expect(bareStatus == 1)
        #expect(bareSummary["pinnedLogId"] == nil)
        // The newest entry's line says more (nothing after it shows whether its header was altered): its own line.
        #expect(problems(bareSummary) == ["0-5:unknownKey", "6:unknownKey"])
        let text = try await CLIHarness.auditctl(state, ["verify", "--public-key", bare])
        #expect(text.stdout.hasPrefix("seq 0-5: unknownKey: signed by key "), "\(text.stdout)")
    }

    @Test("verify --bundle --decrypt opens the events with --data-key or the state directory's keys; none exits 2")
    func bundleDecrypt() async throws {
        let (bundle, publicKeys, dataKey) = try await CLIHarness.investigatorFiles(state, in: directory.path)
        let verifying = ["verify", "--json", "--bundle", bundle, "--public-key", publicKeys, "--decrypt"]

        // Away from the device: no key at all is a usage error, not "OK, 0 payloads opened".
        let none = try await CLIHarness.run("auditctl", verifying)
        #expect(none.status == 2, "\(none.stdout)")
        #expect(none.stderr.contains("--decrypt needs the data keys"), "\(none.stderr)")

        for keys in [["--data-key", dataKey], ["--state-dir", state]] {
            let opened = try await CLIHarness.run("auditctl", verifying + keys)
            #expect(opened.status == 0, "\(keys): \(opened.stderr)")
            let summary = try JSONValue(parsing: Array(opened.stdout.utf8)).objectValue ?? [:]
            #expect(summary["payloadsOpened"] == 6, "\(keys)")
            #expect(summary["problems"] == .array([]), "\(keys)")
        }

        // Another log's data key opens nothing: each event is reported undecryptable (exit 1), never passed over.
        let other = directory.path + "/other"
        try await CLIHarness.initWithSixEvents(other)
        let wrong = try await CLIHarness.run("auditctl", verifying + ["--data-key", try CLIHarness.dataKeyPath(other)])
        #expect(wrong.status == 1)
        let wrongSummary = try JSONValue(parsing: Array(wrong.stdout.utf8)).objectValue ?? [:]
        #expect(wrongSummary["payloadsOpened"] == 0)
        #expect(problems(wrongSummary) == ["1-6:payloadUndecryptable"])

        // A file whose "line" never ends is refused with a message, not read into memory without bound.
        let endless = directory.path + "/endless.bundle"
        let header = try String(contentsOfFile: bundle, encoding: .utf8).split(separator: "\n")[0]
        let handle = try #require(
            FileManager.default.createFile(atPath: endless, contents: Data((header + "\n").utf8))
                ? FileHandle(forWritingAtPath: endless) : nil
        )
        handle.seekToEndOfFile()
        let block = Data(repeating: 0x61, count: 1 << 20)
        for _ in 0..<9 { handle.write(block) }
        try handle.close()
        let refused = try await CLIHarness.run("auditctl", ["verify", "--bundle", endless, "--public-key", publicKeys])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("has a line longer than"), "\(refused.stderr)")
    }
}
