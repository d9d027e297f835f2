import AuditChain
import AuditCollector
import AuditStore
import AuditWire
import Foundation
import TestKit
import Testing
import TransparencyLog

/// `auditctl prove`, `verify-proof` and `verify-consistency` end to end against a real collector on loopback (an
/// ephemeral port): entries delivered to it are proved from its proof endpoint and the files check offline.
@Suite("auditctl prove against a collector")
struct ProveCollectorTests {
    static let token = "prove-s3cret"

    /// Writes the collector's key (as `GET /v1/collector/key` answers it) and the token file into `fixture`.
    static func keyAndToken(
        _ fixture: ProofFixture,
        _ client: CollectorClient
    ) async throws -> (key: String, token: String) {
        let reply = try await client.send("GET", "/v1/collector/key")
        #expect(reply.status == 200)
        let key = try fixture.write(reply.body, "collector-live.key")
        let token = try fixture.write(Array((Self.token + "\n").utf8), "token")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: token)
        return (key, token)
    }

    @Test("a device log delivered whole: prove writes a file that verify-proof accepts, and --decrypt reads the event")
    func proveAndVerify() async throws {
        let fixture = try await ProofFixture.make(events: 5)
        let directory = CollectorTempDir()
        try await withCollector(directory, token: Self.token) { client, _ in
            let entries = try fixture.entries.map { try SealedEntry(serialized: $0) }
            let delivered = try await client.post(CollectorChain.batch(logId: fixture.logId, entries))
            #expect(delivered.status == 200, "\(delivered.body)")
            let (key, token) = try await Self.keyAndToken(fixture, client)
            let url = "http://127.0.0.1:\(client.port)"
            let out = fixture.path("seq3.proof")
            let proved = try await CLIHarness.run(
                "auditctl",
                [
                    "prove", "--collector", url, "--token-file", token, "--state-dir", fixture.state, "--seq", "3",
                    "--collector-key", key, "--out", out,
                ]
            )
            #expect(proved.status == 0, "\(proved.stdout) \(proved.stderr)")
            #expect(
                proved.stdout.contains(
                    "entry seq 3 is leaf 3 of audit-collector.localhost/\(Hex.encode(fixture.logId)) at tree size 6"
                )
            )
            #expect(proved.stdout.contains("the entry is the local log's"))
            #expect(proved.stderr.isEmpty)

            let verified = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-proof", out, "--collector-key", key, "--public-key", fixture.devicePublicKey, "--decrypt",
                    "--state-dir", fixture.state,
                ]
            )
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
            #expect(verified.stdout.contains("OK: entry seq 3 of log \(Hex.encode(fixture.logId)) is leaf 3"))
            #expect(verified.stdout.contains(#""type":"BIOMETRIC_AUTH_SUCCESS""#))
            let file = try TlogProof(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: out))))
            #expect(file.extra == fixture.entries[3])

            // The collector's checkpoint now, and after two more entries: the later one extends it.
            let old = try await client.send("GET", "/v1/logs/\(Hex.encode(fixture.logId))/checkpoint")
            #expect(old.status == 200)
            let oldFile = try fixture.write(old.body, "old.checkpoint")
            let log = try CLIHarness.openLog(fixture.state)
            _ = try await log.append([LogFixture.event(100), LogFixture.event(101)])
            let more = try log.storage.entries(from: 6, through: 7, limit: 2).map {
                try SealedEntry(serialized: $0.bytes)
            }
            #expect(try await client.post(CollectorChain.batch(logId: fixture.logId, more)).status == 200)
            let new = try await client.send("GET", "/v1/logs/\(Hex.encode(fixture.logId))/checkpoint")
            let newFile = try fixture.write(new.body, "new.checkpoint")
            let consistent = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-consistency", oldFile, newFile, "--collector-key", key, "--collector", url, "--token-file",
                    token,
                ]
            )
            #expect(consistent.status == 0, "\(consistent.stdout) \(consistent.stderr)")
            #expect(consistent.stdout.contains("at size 8 "))
            #expect(consistent.stdout.contains("extends size 6"))
            let backwards = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-consistency", newFile, oldFile, "--collector-key", key, "--collector", url, "--token-file",
                    token,
                ]
            )
            #expect(backwards.status == 1)
            #expect(backwards.stdout.contains("rolled back"))

            // The older proof file still verifies, against the older checkpoint it carries.
            let withLiveKey = try await CLIHarness.run(
                "auditctl",
                ["verify-proof", out, "--collector-key", key, "--public-key", fixture.devicePublicKey]
            )
            #expect(withLiveKey.status == 0)
        }
    }

    @Test(
        "seqs that are not leaves (accounted as removed, beyond the tree) fail clearly; leaf index and seq differ after"
    )
    func notALeaf() async throws {
        let fixture = try await ProofFixture.make(events: 1)
        var chain = CollectorChain()
        chain.appendEvents(5)  // 1...5
        chain.appendRemoval(first: 2, last: 3)  // 6
        chain.appendEvents(1)  // 7
        let logHex = Hex.encode(chain.logId)
        let publicKey = try fixture.write(
            PublicKeyFile.render(logId: chain.logId, keys: [chain.signingKey.publicKey]),
            "chain.json"
        )
        let dataKey = fixture.path("chain-data.key")
        try PrivateFile.create(dataKey, bytes: chain.dataKey.rawRepresentation)
        let directory = CollectorTempDir()
        try await withCollector(directory, token: Self.token) { client, _ in
            #expect(try await client.post(chain.batch([0, 1, 4, 5, 6, 7])).status == 200)
            let (key, token) = try await Self.keyAndToken(fixture, client)
            let url = "http://127.0.0.1:\(client.port)"
            func prove(_ seq: Int, _ extra: [String] = []) async throws -> CLIHarness.Result {
                try await CLIHarness.run(
                    "auditctl",
                    [
                        "prove", "--collector", url, "--token-file", token, "--log-id", logHex, "--seq", "\(seq)",
                        "--collector-key", key, "--out", fixture.path("chain-\(seq).proof"),
                    ] + extra
                )
            }
            for (seq, reason) in [(2, "notHeld"), (3, "notHeld"), (8, "notHeld"), (1000, "notHeld")] {
                let refused = try await prove(seq)
                #expect(refused.status == 2, "seq \(seq): \(refused.stdout) \(refused.stderr)")
                #expect(refused.stderr.contains("the collector answered 404"), "seq \(seq): \(refused.stderr)")
                #expect(refused.stderr.contains("[\(reason)]"), "seq \(seq): \(refused.stderr)")
                #expect(refused.stderr.split(separator: "\n").count == 1)
                #expect(!FileManager.default.fileExists(atPath: fixture.path("chain-\(seq).proof")))
            }
            // Seq 2 sent after all: the tree had passed it (the removal record bridged it), so it is held and never a
            // leaf.
            #expect(try await client.post(chain.batch([2])).status == 200)
            let notALeaf = try await prove(2)
            #expect(notALeaf.status == 2, "\(notALeaf.stderr)")
            #expect(notALeaf.stderr.contains("the collector answered 404"))
            #expect(notALeaf.stderr.contains("[notALeaf]"), "\(notALeaf.stderr)")
            let unknown = try await CLIHarness.run(
                "auditctl",
                [
                    "prove", "--collector", url, "--token-file", token, "--log-id", String(repeating: "ab", count: 16),
                    "--seq", "1", "--out", fixture.path("unknown.proof"),
                ]
            )
            #expect(unknown.status == 2)
            #expect(unknown.stderr.contains("[unknownLog]"), "\(unknown.stderr)")

            let proved = try await prove(7)
            #expect(proved.status == 0, "\(proved.stdout) \(proved.stderr)")
            #expect(
                proved.stdout.contains("entry seq 7 is leaf 5 of audit-collector.localhost/\(logHex) at tree size 6")
            )
            let verified = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-proof", fixture.path("chain-7.proof"), "--collector-key", key, "--public-key", publicKey,
                    "--decrypt", "--data-key", dataKey, "--json",
                ]
            )
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
            let members = try JSONValue(parsing: Array(verified.stdout.utf8)).objectValue ?? [:]
            #expect(members["leafIndex"] == .integer(5))
            #expect(members["entry"]?.objectValue?["seq"] == .integer(7))
            #expect(members["entry"]?.objectValue?["event"]?.objectValue?["type"] == .string("BIOMETRIC_AUTH_SUCCESS"))

            let wrongToken = try await CLIHarness.run(
                "auditctl",
                [
                    "prove", "--collector", url, "--token", "nope", "--log-id", logHex, "--seq", "7", "--out",
                    fixture.path("x.proof"),
                ]
            )
            #expect(wrongToken.status == 2)
            #expect(wrongToken.stderr.contains("the collector answered 401"))
        }
    }
}
