import AuditChain
import AuditCollector
import AuditStore
import AuditWire
import Foundation
import TestKit
import Testing

/// `auditctl erase` and `auditctl hold` (docs/FORMAT.md, section 13.9) on a log initialized with subject keys.
@Suite("auditctl erase and hold")
struct EraseCommandTests {
    static let alice = "alice-cli-canary-31d7"
    static let bob = "bob-cli-canary-c0a2"
    static let aliceMarker = "MARKER-CLI-A-9e81f0"
    static let bobMarker = "MARKER-CLI-B-44d2ab"

    /// A log with subject keys and five events of each user, each carrying the user's marker.
    static func makeLog(_ state: String) async throws {
        #expect(try await CLIHarness.auditctl(state, ["init", "--subject-keys"]).status == 0)
        let lines = (0..<10).map { index in
            let (user, marker) = index % 2 == 0 ? (alice, aliceMarker) : (bob, bobMarker)
            return
                #"{"type":"BIOMETRIC_DISABLED","userId":"\#(user)","deviceId":"d","attributes":{"reason":"\#(marker) \#(index)"}}"#
        }
        let emit = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: lines.joined(separator: "\n"))
        #expect(emit.status == 0, "\(emit.stderr)")
    }

    /// Every byte of every file under `path`.
    static func files(under path: String) -> [(String, [UInt8])] {
        let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return names.compactMap { name in
            FileManager.default.contents(atPath: path + "/" + name).map { (name, Array($0)) }
        }
    }

    @Test(
        "canary: after erase, A's user id and marker are in no file of the state directory nor a bundle exported after"
    )
    func canary() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try await Self.makeLog(state)
        let before = try await CLIHarness.auditctl(state, ["log", "--decrypt"])
        #expect(before.stdout.contains(Self.aliceMarker) && before.stdout.contains(Self.bobMarker))

        let erase = try await CLIHarness.auditctl(
            state,
            ["erase", "--user", Self.alice, "--reason", "art. 17 request 12", "--requested-by", "dpo", "--confirm"]
        )
        #expect(erase.status == 0, "\(erase.stderr)")
        #expect(erase.stdout.contains("erased: 5 entries made unreadable under the erasure record at seq 11"))
        #expect(!erase.stdout.contains(Self.alice))

        let bundle = directory.path + "/after.bundle"
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", bundle]).status == 0)
        for (name, bytes) in Self.files(under: state) + [
            ("after.bundle", Array(FileManager.default.contents(atPath: bundle) ?? Data()))
        ] {
            #expect(!bytes.contains(Array(Self.alice.utf8)), "A's user id is in \(name)")
            #expect(!bytes.contains(Array(Self.aliceMarker.utf8)), "A's marker is in \(name)")
        }

        let verify = try await CLIHarness.auditctl(state, ["verify", "--decrypt", "--json"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let summary = try JSONValue(parsing: Array(verify.stdout.utf8)).objectValue ?? [:]
        #expect(summary["ok"] == .bool(true))
        #expect(summary["payloadsOpened"] == .integer(5))
        guard case .array(let erasures)? = summary["erasures"], let first = erasures.first?.objectValue else {
            Issue.record("verify --json lists no erasure: \(verify.stdout)")
            return
        }
        #expect(first["entriesErased"] == .integer(5) && first["recordSeq"] == .integer(11))
        let text = try await CLIHarness.auditctl(state, ["verify", "--decrypt"])
        #expect(text.status == 0 && text.stdout.contains("5 entries erased under the record at seq 11"))

        let log = try await CLIHarness.auditctl(state, ["log", "--decrypt"])
        #expect(log.status == 0, "\(log.stderr)")
        #expect(log.stdout.contains(Self.bobMarker) && !log.stdout.contains(Self.aliceMarker))
        #expect(log.stdout.components(separatedBy: "<erased under the record at seq 11>").count == 6)

        // A bundle says the same as the local log: the record follows the events it erased, in the bundle too.
        let fromBundle = try await CLIHarness.auditctl(state, ["log", "--bundle", bundle, "--decrypt"])
        #expect(fromBundle.status == 0, "\(fromBundle.stderr)")
        #expect(fromBundle.stdout.components(separatedBy: "<erased under the record at seq 11>").count == 6)
        #expect(fromBundle.stdout.contains(Self.bobMarker) && !fromBundle.stdout.contains("no data key"))
        let bundleJSON = try await CLIHarness.auditctl(
            state,
            ["log", "--bundle", bundle, "--decrypt", "--format", "jsonl"]
        )
        #expect(bundleJSON.status == 0, "\(bundleJSON.stderr)")
        #expect(bundleJSON.stdout.components(separatedBy: #""erasedAt":11"#).count == 6, "\(bundleJSON.stdout)")
    }

    @Test(
        "erase refuses without --confirm, while a hold is in force (exit 2, naming the hold's seq), and succeeds after"
    )
    func holdAndConfirm() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try await Self.makeLog(state)
        let unconfirmed = try await CLIHarness.auditctl(state, ["erase", "--user", Self.alice, "--reason", "r"])
        #expect(unconfirmed.status == 2 && unconfirmed.stderr.contains("--confirm"))

        let hold = try await CLIHarness.auditctl(state, ["hold", "set", "--reason", "litigation 2026-9"])
        #expect(hold.status == 0 && hold.stdout.contains("legal hold set at seq 11"), "\(hold.stderr)")
        let again = try await CLIHarness.auditctl(state, ["hold", "set", "--reason", "second"])
        #expect(again.status == 2)
        let refused = try await CLIHarness.auditctl(
            state,
            ["erase", "--user", Self.alice, "--reason", "r", "--confirm"]
        )
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("seq 11") && refused.stderr.contains("litigation 2026-9"), "\(refused.stderr)")
        let shown = try await CLIHarness.auditctl(state, ["hold", "show"])
        #expect(shown.stdout.contains("set at seq 11"))

        #expect(try await CLIHarness.auditctl(state, ["hold", "clear", "--reason", "settled"]).status == 0)
        let erase = try await CLIHarness.auditctl(state, ["erase", "--user", Self.alice, "--reason", "r", "--confirm"])
        #expect(erase.status == 0 && erase.stdout.contains("at seq 13"), "\(erase.stderr)")
        let unknown = try await CLIHarness.auditctl(state, ["erase", "--user", "nobody", "--reason", "r", "--confirm"])
        #expect(unknown.status == 2)
        let report = try await CLIHarness.verify(state)
        #expect(report.isClean && report.erasures.count == 1 && report.activeHoldSeq == nil, "\(report.problems)")
    }

    @Test("an export of a subject's keys is recorded, opens the events with --data-key, and is named by the erasure")
    func exportThenErase() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try await Self.makeLog(state)
        let out = directory.path + "/alice-keys"
        let export = try await CLIHarness.auditctl(
            state,
            ["keys", "export-subject", "--user", Self.alice, "--reason", "case 4", "--out", out]
        )
        #expect(export.status == 0 && export.stdout.contains("export record is at seq 11"), "\(export.stderr)")
        let erase = try await CLIHarness.auditctl(state, ["erase", "--user", Self.alice, "--reason", "r", "--confirm"])
        #expect(erase.stdout.contains("export records at seq 11"), "\(erase.stdout)")
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: out).map { out + "/" + $0 }
        let opened = try await CLIHarness.auditctl(
            state,
            ["log", "--decrypt"] + keyFiles.flatMap { ["--data-key", $0] }
        )
        #expect(opened.stdout.contains(Self.aliceMarker), "the exported keys no longer open the events")
    }

    @Test("collector: an erased subject's events stay proved, show as erased with the device's records, B's still open")
    func collectorCopy() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try await Self.makeLog(state)
        let log = try CLIHarness.openLog(state)
        let logId = try log.info().logId
        let collectorDirectory = CollectorTempDir()
        try await withCollector(collectorDirectory, token: ProveCollectorTests.token) { client, _ in
            func deliver(from seq: UInt64) async throws {
                let entries = try log.storage.entries(from: seq, through: .max, limit: 1000).map {
                    try SealedEntry(serialized: $0.bytes)
                }
                let reply = try await client.post(CollectorChain.batch(logId: logId, entries))
                #expect(reply.status == 200, "\(reply.body)")
            }
            try await deliver(from: 0)
            let erasure = try await log.erase(userId: Self.alice, reason: "request", requestedBy: "")
            try await deliver(from: erasure.recordSeq)

            let keyReply = try await client.send("GET", "/v1/collector/key")
            let key = directory.path + "/collector.key"
            let token = directory.path + "/token"
            try Data(keyReply.body).write(to: URL(fileURLWithPath: key))
            try Data((ProveCollectorTests.token + "\n").utf8).write(to: URL(fileURLWithPath: token))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: token)
            let publicKeys = directory.path + "/public.json"
            #expect(try await CLIHarness.auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
            // Seq 1 is alice's (erased), seq 2 bob's.
            for (seq, expected) in [(1, "<erased under the record at seq \(erasure.recordSeq)>"), (2, Self.bobMarker)] {
                let out = directory.path + "/seq\(seq).proof"
                let proved = try await CLIHarness.auditctl(
                    state,
                    [
                        "prove", "--collector", "http://127.0.0.1:\(client.port)", "--token-file", token, "--seq",
                        String(seq), "--collector-key", key, "--out", out,
                    ]
                )
                #expect(proved.status == 0, "\(proved.stdout) \(proved.stderr)")
                let verified = try await CLIHarness.auditctl(
                    state,
                    ["verify-proof", out, "--collector-key", key, "--public-key", publicKeys, "--decrypt"]
                )
                #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
                #expect(verified.stdout.contains(expected), "\(verified.stdout)")
            }
        }
        for (name, bytes) in Self.files(under: collectorDirectory.path) {
            #expect(!bytes.contains(Array(Self.alice.utf8)), "A's user id is in the collector's \(name)")
            #expect(!bytes.contains(Array(Self.aliceMarker.utf8)), "A's marker is in the collector's \(name)")
        }
    }
}
