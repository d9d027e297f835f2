import AuditChain
import Crypto
import Foundation
import FuzzSupport
import TestKit
import Testing
import TransparencyLog

/// `auditctl prove` and `verify-consistency --collector` against a stand-in collector that answers what each test
/// sets: a good answer becomes a proof file `verify-proof` accepts; forged, inconsistent and hostile answers are
/// refused with exit 1 and write nothing; error answers exit 2.
@Suite("auditctl prove (stand-in collector)")
struct ProveCommandTests {
    /// The proof endpoint's answer for the entry at `seq` (its leaf index: nothing was removed), with parts replaced.
    static func answer(
        _ fixture: ProofFixture,
        seq: Int,
        note: SignedNote? = nil,
        inclusion: [[UInt8]]? = nil,
        entry: [UInt8]? = nil,
        members: [String: JSONValue] = [:]
    ) throws -> [UInt8] {
        let tree = fixture.tree
        var object: [String: JSONValue] = [
            "v": 2, "logId": .string(Hex.encode(fixture.logId)), "seq": .integer(Int64(seq)),
            "leafIndex": .integer(Int64(seq)), "treeSize": .integer(Int64(tree.size)),
            "checkpoint": .string(String(decoding: try (note ?? fixture.checkpoint()).bytes, as: UTF8.self)),
            "inclusion": .array(
                (inclusion ?? tree.inclusionProof(index: UInt64(seq), size: tree.size)!).map {
                    .string(ProofHashes.base64($0))
                }
            ),
            "entry": .string(ProofHashes.base64(entry ?? fixture.entries[seq])),
        ]
        object.merge(members) { _, new in new }
        return JSONValue.object(object).canonicalBytes
    }

    /// `auditctl prove` against `collector` for `seq`, writing `out` in the fixture's directory.
    static func prove(
        _ fixture: ProofFixture,
        _ collector: String,
        seq: Int,
        out: String = "entry.proof",
        _ extra: [String] = []
    ) async throws -> CLIHarness.Result {
        try await CLIHarness.run(
            "auditctl",
            ["prove", "--collector", collector, "--seq", "\(seq)", "--out", fixture.path(out)] + extra
        )
    }

    @Test("a good answer: the file is written, verify-proof accepts it; the path and token are those of the protocol")
    func goodAnswer() async throws {
        let fixture = try await ProofFixture.make()
        let tokenFile = try fixture.write(Array("s3cret\n".utf8), "token")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokenFile)
        let collector = FakeCollector()
        collector.answer(try Self.answer(fixture, seq: 4))
        try await collector.serve { url in
            let checked = try await Self.prove(
                fixture,
                url + "/",
                seq: 4,
                [
                    "--state-dir", fixture.state, "--token-file", tokenFile, "--collector-key",
                    fixture.collectorPublicKey,
                ]
            )
            #expect(checked.status == 0, "\(checked.stdout) \(checked.stderr)")
            #expect(checked.stdout.contains("entry seq 4 is leaf 4 of \(fixture.origin) at tree size 7"))
            #expect(checked.stdout.contains("the entry is the local log's"))
            #expect(checked.stderr.isEmpty)
            let verified = try await fixture.verifyProof(fixture.path("entry.proof"))
            #expect(verified.status == 0, "\(verified.stdout)")
            #expect(verified.stdout.contains("OK: entry seq 4"))

            let unchecked = try await Self.prove(
                fixture,
                url,
                seq: 4,
                out: "unchecked.proof",
                ["--log-id", Hex.encode(fixture.logId), "--token", "s3cret", "--json"]
            )
            #expect(unchecked.status == 0, "\(unchecked.stderr)")
            #expect(unchecked.stderr.contains("the checkpoint's signature was NOT checked"))
            let members = try JSONValue(parsing: Array(unchecked.stdout.utf8)).objectValue ?? [:]
            #expect(members["signatureChecked"] == .bool(false))
            #expect(members["leafIndex"] == .integer(4))
            #expect(members["comparedWithLocalLog"] == .bool(false))
        }
        let path = "/v1/logs/\(Hex.encode(fixture.logId))/proof?seq=4"
        #expect(
            collector.requests == [
                .init(path: path, authorization: "Bearer s3cret"), .init(path: path, authorization: "Bearer s3cret"),
            ]
        )
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixture.path("entry.proof"))))
        #expect(try TlogProof(parsing: written) == fixture.proof(index: 4))
    }

    /// Runs prove against an answer and expects exit 1, `check` and `message` on standard error, and no file.
    func expectRefused(
        _ fixture: ProofFixture,
        _ body: [UInt8],
        seq: Int = 4,
        check message: String,
        extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let collector = FakeCollector()
        collector.answer(body)
        let result = try await collector.serve { url in
            try await Self.prove(
                fixture,
                url,
                seq: seq,
                out: "refused.proof",
                ["--state-dir", fixture.state, "--collector-key", fixture.collectorPublicKey] + extra
            )
        }
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            !FileManager.default.fileExists(atPath: fixture.path("refused.proof")),
            sourceLocation: sourceLocation
        )
    }

    @Test("answers that do not hold: another seq or log, an altered entry, a bad proof or signature, another origin")
    func forgedAnswers() async throws {
        let fixture = try await ProofFixture.make()
        try await expectRefused(fixture, Self.answer(fixture, seq: 3), check: "seq 3, not the one asked")
        try await expectRefused(
            fixture,
            Self.answer(
                fixture,
                seq: 4,
                members: ["seq": 4, "entry": .string(ProofHashes.base64(fixture.entries[3]))]
            ),
            check: "the collector's entry is seq 3 of log"
        )
        var altered = fixture.entries[4]
        altered[altered.count - 70] ^= 0x01
        try await expectRefused(
            fixture,
            Self.answer(fixture, seq: 4, entry: altered),
            check: "differs from the local log's"
        )
        var hashes = fixture.tree.inclusionProof(index: 4, size: 7)!
        hashes[0][0] ^= 0x01
        try await expectRefused(
            fixture,
            Self.answer(fixture, seq: 4, inclusion: hashes),
            check: "the inclusion proof does not lead from the entry as leaf 4"
        )
        try await expectRefused(
            fixture,
            Self.answer(fixture, seq: 4, note: fixture.checkpoint(key: Curve25519.Signing.PrivateKey())),
            check: "the checkpoint is not signed by the collector key"
        )
        try await expectRefused(
            fixture,
            Self.answer(
                fixture,
                seq: 4,
                note: fixture.checkpoint(origin: "collector.test/" + String(repeating: "0", count: 32))
            ),
            check: "is not <collector name>/\(Hex.encode(fixture.logId))"
        )
        try await expectRefused(
            fixture,
            Self.answer(
                fixture,
                seq: 4,
                note: fixture.checkpoint(size: 6),
                inclusion: fixture.tree.inclusionProof(index: 4, size: 6)!
            ),
            check: "treeSize 7 is not the checkpoint's size 6"
        )
    }

    @Test("hostile answers: every value replaced by hostile numbers, junk bodies; exit 1 and no file, never a trap")
    func hostileAnswers() async throws {
        let fixture = try await ProofFixture.make(events: 2)
        let good = try Self.answer(fixture, seq: 1)
        var bodies = HostileIntegers.variants(of: good)
        #expect(bodies.count >= 8 * HostileIntegers.numbers.count)
        bodies += ["", "null", "[]", "{}", "{\"v\":2}", "\u{FEFF}{}", "{\"error\":\"x\"}"].map { Array($0.utf8) }
        bodies.append(Array(good.dropLast()))
        bodies.append(try Self.answer(fixture, seq: 1, members: ["extra": 1]))
        bodies.append(try Self.answer(fixture, seq: 1, members: ["v": 1]))
        bodies.append(
            try Self.answer(fixture, seq: 1, members: ["logId": .string(Hex.encode(fixture.logId).uppercased())])
        )
        bodies.append(
            try Self.answer(
                fixture,
                seq: 1,
                members: ["inclusion": .array(Array(repeating: .string(HostileProofFileTests.hash), count: 65))]
            )
        )
        bodies.append(try Self.answer(fixture, seq: 1, members: ["entry": "AAAA"]))
        bodies.append(try Self.answer(fixture, seq: 1, members: ["entry": ""]))
        bodies.append(try Self.answer(fixture, seq: 1, members: ["checkpoint": "not a note\n"]))
        bodies.append(try Self.answer(fixture, seq: 1, members: ["leafIndex": 9_007_199_254_740_991]))
        let collector = FakeCollector()
        try await collector.serve { url in
            for (number, body) in bodies.enumerated() {
                collector.answer(body)
                let result = try await Self.prove(
                    fixture,
                    url,
                    seq: 1,
                    out: "hostile.proof",
                    ["--log-id", Hex.encode(fixture.logId), "--collector-key", fixture.collectorPublicKey]
                )
                #expect(result.status == 1, "answer \(number): \(result.status) \(result.stderr)")
                #expect(result.stderr.hasPrefix("auditctl: "), "answer \(number): \(result.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.path("hostile.proof")))
    }

    @Test("error answers and no answer: exit 2 with the collector's reason; a larger answer than a proof can be too")
    func errorAnswers() async throws {
        let fixture = try await ProofFixture.make(events: 1)
        let collector = FakeCollector()
        try await collector.serve { url in
            collector.answer(
                .init(status: 404, body: Array(#"{"error":"seq 9 is not a leaf of the log\u001b[31m"}"#.utf8))
            )
            let missing = try await Self.prove(fixture, url, seq: 9, ["--log-id", Hex.encode(fixture.logId)])
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("the collector answered 404"))
            #expect(missing.stderr.contains("seq 9 is not a leaf of the log?[31m"))

            collector.answer(.init(status: 200, body: [UInt8](repeating: 0x20, count: 5 << 20)))
            let huge = try await Self.prove(fixture, url, seq: 1, ["--log-id", Hex.encode(fixture.logId)])
            #expect(huge.status == 2)
            #expect(huge.stderr.contains("larger than 4194304 bytes"))
        }
        let closed = try await Self.prove(
            fixture,
            "http://127.0.0.1:9",
            seq: 1,
            ["--log-id", Hex.encode(fixture.logId)]
        )
        #expect(closed.status == 2)
        #expect(closed.stderr.contains("no answer from the collector (Connection refused)"))
        for arguments in [
            ["--log-id", "00"], ["--log-id", Hex.encode(fixture.logId), "--state-dir", fixture.state],
            ["--log-id", Hex.encode(fixture.logId), "--token", "a", "--token-file", "b"],
        ] {
            let usage = try await Self.prove(fixture, "http://127.0.0.1:9", seq: 1, arguments)
            #expect(usage.status == 2, "\(arguments)")
        }
        let badURL = try await Self.prove(
            fixture,
            "ftp://127.0.0.1:9",
            seq: 1,
            ["--log-id", Hex.encode(fixture.logId)]
        )
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("is not an http:// or https:// URL"))
        #expect(!FileManager.default.fileExists(atPath: fixture.path("entry.proof")))
    }

    @Test("verify-consistency --collector: the fetched proof holds; another range or a bad proof does not")
    func consistencyFromCollector() async throws {
        let fixture = try await ProofFixture.make()
        let old = try fixture.write(fixture.checkpoint(size: 3).bytes, "old.checkpoint")
        let new = try fixture.write(fixture.checkpoint().bytes, "new.checkpoint")
        func answer(from: Int, to: Int, proof: [[UInt8]]) -> [UInt8] {
            JSONValue.object([
                "v": 2, "logId": .string(Hex.encode(fixture.logId)), "from": .integer(Int64(from)),
                "to": .integer(Int64(to)), "proof": .array(proof.map { .string(ProofHashes.base64($0)) }),
            ]).canonicalBytes
        }
        let proof = fixture.tree.consistencyProof(first: 3, second: 7)!
        let collector = FakeCollector()
        try await collector.serve { url in
            let arguments = [
                "verify-consistency", old, new, "--collector-key", fixture.collectorPublicKey, "--collector", url,
            ]
            collector.answer(answer(from: 3, to: 7, proof: proof))
            let good = try await CLIHarness.run("auditctl", arguments + ["--token", "t"])
            #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
            #expect(good.stdout.hasPrefix("OK: "))

            collector.answer(answer(from: 2, to: 7, proof: proof))
            let otherRange = try await CLIHarness.run("auditctl", arguments)
            #expect(otherRange.status == 1)
            #expect(otherRange.stdout.contains("FAILED (answer): the collector answered the proof of log"))

            collector.answer(answer(from: 3, to: 7, proof: Array(proof.reversed())))
            let reversed = try await CLIHarness.run("auditctl", arguments)
            #expect(reversed.status == 1)
            #expect(reversed.stdout.contains("FAILED (consistency)"))

            collector.answer(Array(#"{"v":2,"logId":"x"}"#.utf8))
            let junk = try await CLIHarness.run("auditctl", arguments)
            #expect(junk.status == 1)
            #expect(junk.stdout.contains("FAILED (answer)"))

            collector.answer(.init(status: 401, body: Array(#"{"error":"missing or wrong bearer token"}"#.utf8)))
            let denied = try await CLIHarness.run("auditctl", arguments)
            #expect(denied.status == 2)
            #expect(denied.stderr.contains("401"))
        }
        let consistencyPath = "/v1/logs/\(Hex.encode(fixture.logId))/proof/consistency?from=3&to=7"
        #expect(collector.requests.first == .init(path: consistencyPath, authorization: "Bearer t"))
    }
}
