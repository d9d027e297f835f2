import AuditChain
import AuditStore
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `auditctl log` as the investigator's query tool: filters, bundles with key files, JSON Lines, OCSF, follow.
@Suite("auditctl log queries")
struct LogCommandTests {
    let directory: TemporaryDirectory
    let state: String

    init() throws {
        directory = try TemporaryDirectory()
        state = directory.path + "/state"
    }

    /// A log with three events that occurred in January 2026 (sealed now) and one that occurred now:
    /// seq 1 alice/phone-1 success, 2 bob/phone-1 failure, 3 alice/tablet-2 fallback, 4 carol/phone-1 success.
    func makeLog() async throws {
        // Format version 1: the key rotation record and the hand-sealed entries below are version 1's.
        let initialized = try await CLIHarness.auditctl(
            state,
            ["init", "--device-id", "phone-1", "--format-version", "1"]
        )
        try #require(initialized.status == 0, "\(initialized.stderr)")
        let lines = [
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","attributes":{"unlockDurationMs":412},"occurredAt":"2026-01-10T08:00:00Z"}"#,
            #"{"type":"BIOMETRIC_AUTH_FAILURE","userId":"bob","deviceId":"phone-1","attributes":{"attemptCount":2,"errorCode":"ERR-107-030"},"occurredAt":"2026-01-20T09:30:00Z"}"#,
            #"{"type":"PASSWORD_AUTH_FALLBACK","userId":"alice","deviceId":"tablet-2","attributes":{"reason":"LOCKOUT"},"occurredAt":"2026-01-31T23:59:00Z"}"#,
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"carol","deviceId":"phone-1","attributes":{"unlockDurationMs":99}}"#,
        ]
        let emitted = try await CLIHarness.auditctl(
            state,
            ["emit", "--json", "-"],
            stdin: lines.joined(separator: "\n") + "\n"
        )
        try #require(emitted.status == 0, "\(emitted.stderr)")
    }

    /// The JSON Lines output as objects, checking that every line is one JSON object.
    func objects(_ output: String) throws -> [[String: JSONValue]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONValue(parsing: Array(line.utf8)).objectValue, "not a JSON object: \(line)")
        }
    }

    /// The sequence numbers `log --format jsonl` selects with `arguments`.
    func seqs(_ arguments: [String]) async throws -> [Int64] {
        let result = try await CLIHarness.auditctl(state, ["log", "--format", "jsonl"] + arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try objects(result.stdout).compactMap { $0["seq"]?.integerValue }
    }

    @Test("filters by user, device, type, occurrence and sealing time, seq range and kind")
    func filters() async throws {
        try await makeLog()
        #expect(try await seqs([]) == [0, 1, 2, 3, 4])
        #expect(try await seqs(["--user", "alice"]) == [1, 3])
        #expect(try await seqs(["--user", "alice", "--user", "carol"]) == [1, 3, 4])
        #expect(try await seqs(["--device", "tablet-2"]) == [3])
        #expect(try await seqs(["--type", "BIOMETRIC_AUTH_SUCCESS", "--device", "phone-1"]) == [1, 4])
        // Occurred in January, sealed now: found by the event's time, not by the sealing time.
        #expect(try await seqs(["--since", "2026-01-01", "--until", "2026-01-31"]) == [1, 2, 3])
        #expect(try await seqs(["--since", "2026-01-15T00:00:00Z", "--until", "2026-01-31T00:00:00+01:00"]) == [2])
        #expect(try await seqs(["--sealed-since", "2026-01-01", "--sealed-until", "2026-01-31"]).isEmpty)
        #expect(try await seqs(["--sealed-since", "2026-01-01", "--kind", "event"]) == [1, 2, 3, 4])
        #expect(try await seqs(["--kind", "genesis"]) == [0])
        #expect(try await seqs(["--from-seq", "2", "--to-seq", "3"]) == [2, 3])
        #expect(try await seqs(["--user", "alice", "--limit", "1"]) == [1])

        let text = try await CLIHarness.auditctl(state, ["log", "--user", "bob", "--decrypt"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("occurredAt=2026-01-20T09:30:00.000Z"))
        #expect(text.stdout.contains("user=bob"))
        // Filtered without --decrypt: the entries are chosen by their content but shown sealed.
        let sealed = try await CLIHarness.auditctl(state, ["log", "--user", "bob"])
        #expect(sealed.stdout.contains("use --decrypt") && !sealed.stdout.contains("bob"))

        // A mistyped type selects nothing, and says so with the closest known types.
        let mistyped = try await CLIHarness.auditctl(state, ["log", "--type", "BIOMETRIC_AUTH_SUCESS"])
        #expect(mistyped.status == 0 && mistyped.stdout.isEmpty)
        #expect(
            mistyped.stderr.contains(
                "warning: --type BIOMETRIC_AUTH_SUCESS is not a type of the catalogue; did you mean BIOMETRIC_AUTH_SUCCESS"
            ),
            "\(mistyped.stderr)"
        )
        let known = try await CLIHarness.auditctl(state, ["log", "--type", "BIOMETRIC_AUTH_SUCCESS"])
        #expect(!known.stderr.contains("warning"), "\(known.stderr)")
    }

    @Test("a bundle read with a key file and pinned public keys: JSON Lines and OCSF; no key exits 2")
    func bundle() async throws {
        try await makeLog()
        let (bundle, publicKeys, dataKey) = try await CLIHarness.investigatorFiles(state, in: directory.path)
        let reading = ["log", "--bundle", bundle, "--public-key", publicKeys]

        let lines = try await CLIHarness.run(
            "auditctl",
            reading + ["--data-key", dataKey, "--decrypt", "--format", "jsonl", "--user", "bob"]
        )
        #expect(lines.status == 0, "\(lines.stderr)")
        let rows = try objects(lines.stdout)
        #expect(rows.count == 1)
        #expect(rows.first?["event"]?.objectValue?["userId"] == "bob")
        #expect(!lines.stderr.contains("warning"))

        let ocsf = try await CLIHarness.run(
            "auditctl",
            reading + ["--data-key", dataKey, "--format", "ocsf", "--kind", "event"]
        )
        #expect(ocsf.status == 0, "\(ocsf.stderr)")
        let events = try objects(ocsf.stdout)
        #expect(events.count == 4)
        #expect(events.allSatisfy { $0["class_uid"] == 3002 && $0["category_uid"] == 3 })
        let failure = try #require(events.first { $0["user"]?.objectValue?["uid"] == "bob" })
        #expect(failure["activity_id"] == 1)
        #expect(failure["status_id"] == 2)
        #expect(failure["type_uid"] == 300_201)
        #expect(failure["status_code"] == "ERR-107-030")
        #expect(failure["time"] == .integer(AuditTimestamp(rfc3339: "2026-01-20T09:30:00Z")!.millisecondsSinceEpoch))
        #expect(failure["device"]?.objectValue?["uid"] == "phone-1")
        let metadata = try #require(failure["metadata"]?.objectValue)
        #expect(metadata["version"] == "1.3.0")
        #expect(metadata["product"]?.objectValue?["name"] == "audit-chain")
        #expect(metadata["sequence"] == 2)
        #expect(failure["unmapped"]?.objectValue?["attributes"]?.objectValue?["attemptCount"] == 2)
        #expect(events.first { $0["user"]?.objectValue?["uid"] == "alice" }?["status_id"] == 1)

        for arguments in [["--decrypt"], ["--user", "bob"], ["--format", "ocsf"]] {
            let refused = try await CLIHarness.run("auditctl", reading + arguments)
            #expect(refused.status == 2, "\(arguments)")
            #expect(refused.stderr.contains("needs the data keys"), "\(arguments): \(refused.stderr)")
        }
        // A key file that does not match: the events are named as unopened, exit 2.
        let otherKey = directory.path + "/other.key"
        #expect(
            FileManager.default.createFile(
                atPath: otherKey,
                contents: Data(count: 32),
                attributes: [.posixPermissions: 0o600]
            )
        )
        let wrong = try await CLIHarness.run("auditctl", reading + ["--data-key", otherKey, "--decrypt"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("4 event(s) could not be opened"), "\(wrong.stderr)")
    }

    @Test("bad dates, formats and flag combinations exit 2 with a message")
    func badInput() async throws {
        try await makeLog()
        let cases: [([String], String)] = [
            (["--since", "2026-13-01"], "--since"),
            (["--until", "yesterday"], "--until"),
            (["--sealed-since", "2026-01-01T25:00:00Z"], "--sealed-since"),
            (["--format", "xml"], "--format"),
            (["--kind", "nope"], "--kind"),
            (["--from-seq", "3", "--to-seq", "2"], "--from-seq"),
            (["--follow", "--json"], "--follow"),
        ]
        for (arguments, named) in cases {
            let result = try await CLIHarness.auditctl(state, ["log"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(named), "\(arguments): \(result.stderr)")
        }
    }

    @Test("--follow prints an entry appended after it started, and ends on SIGTERM")
    func follow() async throws {
        try await makeLog()
        var environment = ProcessInfo.processInfo.environment
        environment["AUDIT_STATE_DIR"] = nil
        let child = try ChildProcess.start(
            CLIHarness.path("auditctl"),
            ["log", "--follow", "--format", "jsonl", "--poll-ms", "50", "--state-dir", state],
            environment: environment,
            outputPath: directory.path + "/follow.out"
        )
        #expect(try await eventually { child.output.split(separator: "\n").count == 5 })
        let emitted = try await CLIHarness.auditctl(
            state,
            [
                "emit", "--type", "BIOMETRIC_ENABLED", "--user", "dave", "--device", "phone-1", "--attr",
                "biometryType=faceId",
            ]
        )
        #expect(emitted.status == 0)
        #expect(try await eventually { child.output.contains(#""seq":5"#) })
        child.send(SIGTERM)
        // Killed after 10 s if SIGTERM did not end it (then `signaled` is true).
        let result = await child.wait(timeout: .seconds(300))
        #expect(result.status == 0 && !result.signaled)
        #expect(try objects(child.output).count == 6)
    }

    @Test("a tampered bundle: a flipped payload byte, a removed entry, other keys: exit 1 naming the seq and what")
    func tamperedBundle() async throws {
        try await makeLog()
        let bundle = directory.path + "/log.bundle"
        let publicKeys = directory.path + "/public.json"
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", bundle]).status == 0)
        #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
        let lines = try String(contentsOfFile: bundle, encoding: .utf8).split(separator: "\n").map(String.init)
        // The header, then seq 0 (genesis), 1...4 (events), then the export's checkpoint record.
        try #require(lines.count >= 6)
        let reading = ["log", "--format", "jsonl", "--public-key", publicKeys, "--bundle"]

        let intact = try await CLIHarness.run("auditctl", reading + [bundle])
        #expect(intact.status == 0, "\(intact.stderr)")

        // A byte of seq 2's sealed payload flipped.
        let stored = try LogBundle.entry(line: Array(lines[3].utf8), lineNumber: 4)
        #expect(stored.seq == 2)
        let entry = try SealedEntry(serialized: stored.bytes)
        var bytes = stored.bytes
        let offset = try #require(Self.offset(of: entry.payload, in: bytes))
        bytes[offset + entry.payload.count / 2] ^= 0x01
        let flipped = directory.path + "/flipped.bundle"
        var changed = lines
        changed[3] = String(decoding: LogBundle.entryLine(StoredEntry(seq: 2, bytes: bytes)), as: UTF8.self)
        try (changed.joined(separator: "\n") + "\n").write(toFile: flipped, atomically: true, encoding: .utf8)
        let tampered = try await CLIHarness.run("auditctl", reading + [flipped])
        #expect(tampered.status == 1, "\(tampered.stderr)")
        #expect(tampered.stderr.contains("the bundle's chain does not hold"), "\(tampered.stderr)")
        #expect(tampered.stderr.contains("seq 2"), "\(tampered.stderr)")

        // Seq 2 removed.
        let cut = directory.path + "/cut.bundle"
        changed = lines
        changed.remove(at: 3)
        try (changed.joined(separator: "\n") + "\n").write(toFile: cut, atomically: true, encoding: .utf8)
        let removed = try await CLIHarness.run("auditctl", reading + [cut])
        #expect(removed.status == 1, "\(removed.stderr)")
        #expect(removed.stderr.contains("the bundle's chain does not hold"), "\(removed.stderr)")
        #expect(removed.stderr.contains("seq 2"), "\(removed.stderr)")

        // The public keys of another log pinned: nothing in the bundle is authentic.
        let other = directory.path + "/other"
        #expect(try await CLIHarness.auditctl(other, ["init", "--device-id", "phone-9"]).status == 0)
        let otherKeys = directory.path + "/other-public.json"
        #expect(try await CLIHarness.auditctl(other, ["keys", "export-public", "--out", otherKeys]).status == 0)
        let foreign = try await CLIHarness.run(
            "auditctl",
            ["log", "--format", "jsonl", "--public-key", otherKeys, "--bundle", bundle]
        )
        #expect(foreign.status == 1, "\(foreign.stderr)")
        #expect(foreign.stderr.contains("the bundle's chain does not hold"), "\(foreign.stderr)")
        #expect(foreign.stderr.contains("seq 0"), "\(foreign.stderr)")
    }

    /// Where `part` first occurs in `bytes`.
    static func offset(of part: [UInt8], in bytes: [UInt8]) -> Int? {
        guard !part.isEmpty, part.count <= bytes.count else { return nil }
        return (0...(bytes.count - part.count)).first { bytes[$0..<$0 + part.count].elementsEqual(part) }
    }

    @Test("--follow opens the entries sealed after a key rotation, and says which entry it cannot open (exit 2)")
    func followAcrossRotation() async throws {
        try await makeLog()
        var environment = ProcessInfo.processInfo.environment
        environment["AUDIT_STATE_DIR"] = nil
        let child = try ChildProcess.start(
            CLIHarness.path("auditctl"),
            ["log", "--follow", "--decrypt", "--format", "jsonl", "--poll-ms", "50", "--state-dir", state],
            environment: environment,
            outputPath: directory.path + "/follow.out"
        )
        // Standard error shares the file: only the JSON lines are entries.
        func rows() -> [[String: JSONValue]] {
            child.output.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap {
                try? JSONValue(parsing: Array($0.utf8)).objectValue
            }
        }
        func row(_ seq: Int64) -> [String: JSONValue]? { rows().first { $0["seq"]?.integerValue == seq } }
        #expect(try await eventually { rows().count == 5 })
        let rotated = try await CLIHarness.auditctl(state, ["keys", "rotate", "--json"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let emitted = try await CLIHarness.auditctl(
            state,
            [
                "emit", "--type", "BIOMETRIC_ENABLED", "--user", "dave", "--device", "phone-1", "--attr",
                "biometryType=faceId",
            ]
        )
        #expect(emitted.status == 0, "\(emitted.stderr)")
        // Seq 5 is the rotation record, seq 6 the first event under the new data key: opened.
        #expect(try await eventually { row(6) != nil })
        #expect(row(5)?["kind"] == "keyRotation")
        #expect(row(6)?["event"]?.objectValue?["userId"] == "dave", "\(child.output)")
        #expect(row(6)?["dataKeyId"] != row(4)?["dataKeyId"])

        // Seq 7 sealed (and signed by the log's key) under a data key the state directory does not hold.
        let foreignKey = DataKey.generate()
        let state = self.state
        let sealed = try await CLIHarness.offPool {
            let log = try CLIHarness.openLog(state)
            let head = try log.info().head
            var sealer = ChainSealer(head: head, signingKey: try log.activeSigningKey(), dataKey: foreignKey)
            return try sealer.seal(LogFixture.event(7), time: .now(), nonce: [UInt8](repeating: 7, count: 12))
        }
        try await sealed.append(to: state)
        #expect(try await eventually { row(7) != nil })
        let unopened = try #require(row(7))
        #expect(unopened["event"] == nil)
        #expect(unopened["error"]?.stringValue?.contains("no data key \(foreignKey.id)") == true, "\(unopened)")
        #expect(try await eventually { child.output.contains("entry 7: the event could not be opened") })
        child.send(SIGTERM)
        let result = await child.wait(timeout: .seconds(300))
        #expect(result.status == 2 && !result.signaled)
        #expect(child.output.contains("1 event(s) could not be opened"), "\(child.output)")

        // Without --follow: the same, and the chain the listing comes from is checked first: an event under a data
        // key that is not the active one breaks the rules of docs/FORMAT.md section 7 (exit 1, both said).
        let once = try await CLIHarness.auditctl(state, ["log", "--decrypt", "--format", "jsonl"])
        #expect(once.status == 1)
        #expect(once.stderr.contains("the log's chain does not hold"), "\(once.stderr)")
        #expect(once.stderr.contains("1 event(s) could not be opened (no data key \(foreignKey.id))"), "\(once.stderr)")
        #expect(try objects(once.stdout).count == 8)
    }

    /// Polls `condition` until it holds, for minutes at most (a cap for what never comes).
    func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }
}

extension SealedEntry {
    /// Appends this entry (sealed on the log's head) to the log of a state directory, behind its `AuditLog`.
    fileprivate func append(to state: String) async throws {
        let entry = self
        try await CLIHarness.openLog(state).storage.append { snapshot in
            guard snapshot.head?.seq == entry.header.seq - 1 else { throw HeadMoved() }
            return (LogAppend(entries: [entry], metadata: [:]), ())
        }
    }
}

/// The log's head is not where the entry was sealed to continue.
private struct HeadMoved: Error {}
