import AuditChain
import Crypto
import Foundation
import TestKit
import Testing
import TransparencyLog

/// `auditctl verify-consistency OLD NEW --proof FILE` against the built binary, over checkpoints of a real log's tree
/// signed as the collector signs them.
@Suite("auditctl verify-consistency")
struct VerifyConsistencyCommandTests {
    /// Runs verify-consistency on two notes and a proof, written to files first.
    func run(
        _ fixture: ProofFixture,
        old: SignedNote,
        new: SignedNote,
        proof: [[UInt8]]?,
        _ extra: [String] = []
    ) async throws -> CLIHarness.Result {
        let oldFile = try fixture.write(old.bytes, "old.checkpoint")
        let newFile = try fixture.write(new.bytes, "new.checkpoint")
        var arguments = ["verify-consistency", oldFile, newFile, "--collector-key", fixture.collectorPublicKey]
        if let proof { arguments += ["--proof", try fixture.write(ProofHashes.render(proof), "consistency.proof")] }
        return try await CLIHarness.run("auditctl", arguments + extra)
    }

    func expectRefused(
        _ result: CLIHarness.Result,
        check: String,
        message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.split(separator: "\n").count == 1, sourceLocation: sourceLocation)
        #expect(result.stdout.hasPrefix("FAILED (\(check)): "), "\(result.stdout)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains(message), "\(result.stdout)", sourceLocation: sourceLocation)
    }

    @Test("a later checkpoint of the same tree with its consistency proof: exit 0; equal heads need no proof")
    func consistent() async throws {
        let fixture = try await ProofFixture.make()
        let tree = fixture.tree
        let proof = tree.consistencyProof(first: 3, second: 7)!
        let result = try await run(fixture, old: fixture.checkpoint(size: 3), new: fixture.checkpoint(), proof: proof)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.hasPrefix("OK: \(fixture.origin) at size 7 "))
        #expect(result.stdout.contains("extends size 3"))

        let json = try await run(
            fixture,
            old: fixture.checkpoint(size: 4),
            new: fixture.checkpoint(),
            proof: tree.consistencyProof(first: 4, second: 7)!,
            ["--json"]
        )
        #expect(json.status == 0)
        let members = try JSONValue(parsing: Array(json.stdout.utf8)).objectValue ?? [:]
        #expect(members["consistent"] == .bool(true))
        #expect(members["old"]?.objectValue?["size"] == .integer(4))
        #expect(members["new"]?.objectValue?["size"] == .integer(7))

        let same = try await run(fixture, old: fixture.checkpoint(size: 5), new: fixture.checkpoint(size: 5), proof: [])
        #expect(same.status == 0, "\(same.stdout)")
        #expect(same.stdout.contains("at size 5"))
    }

    @Test("a NEW that does not extend OLD: the proof does not lead from OLD's root to NEW's")
    func inconsistent() async throws {
        let fixture = try await ProofFixture.make()
        // A history that rewrote leaf 1: the same sizes, another tree.
        var leaves = fixture.entries
        leaves[1][120] ^= 0x01
        let forged = MerkleTree(leaves: leaves)
        let result = try await run(
            fixture,
            old: fixture.checkpoint(size: 3),
            new: fixture.checkpoint(of: forged),
            proof: forged.consistencyProof(first: 3, second: 7)!
        )
        expectRefused(result, check: "consistency", message: "does not lead from OLD's root (size 3) to NEW's (size 7)")

        var hashes = fixture.tree.consistencyProof(first: 3, second: 7)!
        hashes[0][0] ^= 0x01
        let damaged = try await run(fixture, old: fixture.checkpoint(size: 3), new: fixture.checkpoint(), proof: hashes)
        expectRefused(damaged, check: "consistency", message: "does not lead from OLD's root")

        let short = try await run(
            fixture,
            old: fixture.checkpoint(size: 3),
            new: fixture.checkpoint(),
            proof: Array(hashes.dropLast())
        )
        expectRefused(short, check: "consistency", message: "from size 3 to 7 does not hold")

        // Equal sizes: a proof file must then be empty.
        let needless = try await run(fixture, old: fixture.checkpoint(), new: fixture.checkpoint(), proof: hashes)
        expectRefused(needless, check: "consistency", message: "from size 7 to 7 does not hold")
        let fork = try await run(
            fixture,
            old: fixture.checkpoint(size: 7),
            new: fixture.checkpoint(of: forged),
            proof: []
        )
        expectRefused(fork, check: "consistency", message: "same size 7 and different roots")
    }

    @Test("a NEW smaller than OLD: rolled back")
    func rolledBack() async throws {
        let fixture = try await ProofFixture.make()
        let result = try await run(fixture, old: fixture.checkpoint(), new: fixture.checkpoint(size: 4), proof: [])
        expectRefused(result, check: "consistency", message: "rolled back: NEW has 4 leaves, fewer than OLD's 7")
    }

    @Test("checkpoints of different origins, or one not signed by the collector's key")
    func originsAndSignatures() async throws {
        let fixture = try await ProofFixture.make()
        let other = try await ProofFixture.make(events: 1)
        let otherOrigin = ProofFixture.name + "/" + Hex.encode(other.logId)
        let differentLogs = try await run(
            fixture,
            old: fixture.checkpoint(size: 3),
            new: fixture.checkpoint(origin: otherOrigin),
            proof: fixture.tree.consistencyProof(first: 3, second: 7)!
        )
        expectRefused(differentLogs, check: "origin", message: "the checkpoints are of different logs")

        let otherCollector = "elsewhere.test/" + Hex.encode(fixture.logId)
        let differentNames = try await run(
            fixture,
            old: fixture.checkpoint(size: 3),
            new: fixture.checkpoint(origin: otherCollector),
            proof: fixture.tree.consistencyProof(first: 3, second: 7)!
        )
        expectRefused(differentNames, check: "origin", message: "NEW of \"\(otherCollector)\"")

        let forged = try await run(
            fixture,
            old: fixture.checkpoint(size: 3),
            new: fixture.checkpoint(key: Curve25519.Signing.PrivateKey()),
            proof: fixture.tree.consistencyProof(first: 3, second: 7)!
        )
        expectRefused(forged, check: "checkpoint-signature", message: "NEW is not signed by the collector key")

        let notALog = try await run(
            fixture,
            old: fixture.checkpoint(size: 3, origin: "collector.test"),
            new: fixture.checkpoint(),
            proof: []
        )
        expectRefused(
            notALog,
            check: "origin",
            message: "OLD's origin \"collector.test\" is not <collector name>/<log id>"
        )
    }

    @Test("malformed notes and proof files: exit 1 naming the file; usage errors: exit 2")
    func malformedInputs() async throws {
        let fixture = try await ProofFixture.make()
        let newFile = try fixture.write(fixture.checkpoint().bytes, "new.checkpoint")
        for junk in ["", "not a note\n", "origin\n5\nAAAA\n\n\u{2014} x AAAAAAAA\n"] {
            let oldFile = try fixture.write(Array(junk.utf8), "junk.checkpoint")
            let result = try await CLIHarness.run(
                "auditctl",
                [
                    "verify-consistency", oldFile, newFile, "--collector-key", fixture.collectorPublicKey, "--proof",
                    "-",
                ],
                stdin: ""
            )
            expectRefused(result, check: "file", message: "OLD is not a signed checkpoint note")
        }
        for junk in ["AAAA\n", "\n\n", String(repeating: "A", count: 43) + "=\r\n"] {
            let result = try await run(
                fixture,
                old: fixture.checkpoint(size: 3),
                new: fixture.checkpoint(),
                proof: nil,
                ["--proof", try fixture.write(Array(junk.utf8), "junk.proof")]
            )
            expectRefused(result, check: "file", message: "the consistency proof file: line 1 is not")
        }
        let neither = try await run(fixture, old: fixture.checkpoint(size: 3), new: fixture.checkpoint(), proof: nil)
        #expect(neither.status == 2)
        #expect(neither.stderr.contains("give --proof FILE or --collector URL"))
        let both = try await run(
            fixture,
            old: fixture.checkpoint(size: 3),
            new: fixture.checkpoint(),
            proof: [],
            ["--collector", "http://127.0.0.1:9"]
        )
        #expect(both.status == 2)
    }
}
