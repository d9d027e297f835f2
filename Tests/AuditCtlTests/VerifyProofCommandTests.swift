import AuditChain
import AuditStore
import AuditWire
import Crypto
import Foundation
import TestKit
import Testing
import TransparencyLog

/// `auditctl verify-proof` against the built binary: a good proof file of a real log's entry is accepted and shown;
/// each kind of damage is refused with exit 1 and a line naming the check that failed; `--decrypt` opens the event
/// only with its data key.
@Suite("auditctl verify-proof")
struct VerifyProofCommandTests {
    @Test("a good proof file: exit 0, the checkpoint, the leaf and the entry's header, the event left encrypted")
    func acceptsGoodProof() async throws {
        let fixture = try await ProofFixture.make()
        let file = try fixture.write(fixture.proof(index: 3).bytes, "good.proof")
        let result = try await fixture.verifyProof(file)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("checkpoint: \(fixture.origin), tree size 7"))
        #expect(result.stdout.contains("inclusion: leaf 3 of 7"))
        #expect(result.stdout.contains("entry: seq 3, "))
        #expect(result.stdout.contains(", event, log \(Hex.encode(fixture.logId))"))
        #expect(result.stdout.contains("use --decrypt"))
        #expect(result.stdout.contains("OK: entry seq 3 of log \(Hex.encode(fixture.logId)) is leaf 3"))
        #expect(!result.stdout.contains("BIOMETRIC_AUTH_SUCCESS"))

        let json = try await fixture.verifyProof(file, ["--json"])
        #expect(json.status == 0)
        let members = try JSONValue(parsing: Array(json.stdout.utf8)).objectValue ?? [:]
        #expect(members["verified"] == .bool(true))
        #expect(members["leafIndex"] == .integer(3))
        #expect(members["treeSize"] == .integer(7))
        #expect(members["origin"] == .string(fixture.origin))
        #expect(members["entry"]?.objectValue?["seq"] == .integer(3))
        #expect(members["entry"]?.objectValue?["event"] == nil)
    }

    @Test("the genesis, a system record, is shown in plain text; the collector key as 64 hex digits works too")
    func genesisAndHexKey() async throws {
        let fixture = try await ProofFixture.make(events: 2)
        let file = try fixture.write(fixture.proof(index: 0).bytes, "genesis.proof")
        let hexKey = try fixture.write(
            Array((Hex.encode(fixture.collectorKey.publicKey.rawRepresentation) + "\n").utf8),
            "collector.hex"
        )
        let result = try await CLIHarness.run(
            "auditctl",
            ["verify-proof", file, "--collector-key", hexKey, "--public-key", fixture.devicePublicKey]
        )
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("record: {"))
        #expect(result.stdout.contains(Hex.encode(fixture.logId)))
    }

    /// Runs verify-proof on `proof` (rendered) and expects exit 1 with `check` and `message` on its FAILED line.
    func expectRefused(
        _ fixture: ProofFixture,
        _ bytes: [UInt8],
        check: String,
        message: String,
        publicKey: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let file = try fixture.write(bytes, "bad-\(check).proof")
        var arguments = ["verify-proof", file, "--collector-key", fixture.collectorPublicKey]
        arguments += ["--public-key", publicKey ?? fixture.devicePublicKey]
        let result = try await CLIHarness.run("auditctl", arguments)
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stdout)", sourceLocation: sourceLocation)
        #expect(result.stdout.hasPrefix("FAILED (\(check)): "), "\(result.stdout)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains(message), "\(result.stdout)", sourceLocation: sourceLocation)
        let json = try await CLIHarness.run("auditctl", arguments + ["--json"])
        #expect(json.status == 1, sourceLocation: sourceLocation)
        let members = try JSONValue(parsing: Array(json.stdout.utf8)).objectValue ?? [:]
        #expect(members["verified"] == .bool(false), sourceLocation: sourceLocation)
        #expect(members["check"] == .string(check), sourceLocation: sourceLocation)
    }

    @Test("a flipped bit in the entry's payload, or in its header: refused before the tree is consulted")
    func flippedBitInEntry() async throws {
        let fixture = try await ProofFixture.make()
        let good = try fixture.proof(index: 2)
        var payloadFlipped = good.extra
        payloadFlipped[payloadFlipped.count - 70] ^= 0x01  // the payload's last bytes, before the signature
        try await expectRefused(
            fixture,
            TlogProof(extra: payloadFlipped, index: 2, inclusionProof: good.inclusionProof, note: good.note).bytes,
            check: "payload",
            message: "the payload was altered"
        )
        var headerFlipped = good.extra
        headerFlipped[35] ^= 0x01  // the time, in the signed header
        try await expectRefused(
            fixture,
            TlogProof(extra: headerFlipped, index: 2, inclusionProof: good.inclusionProof, note: good.note).bytes,
            check: "entry-signature",
            message: "the entry's signature does not verify"
        )
    }

    @Test("another index, a changed proof hash: the inclusion proof does not lead to the root")
    func inclusionDamage() async throws {
        let fixture = try await ProofFixture.make()
        let good = try fixture.proof(index: 2)
        // Leaves 2 and 3 of 7 have proofs of the same length: only the root tells them apart.
        try await expectRefused(
            fixture,
            TlogProof(extra: good.extra, index: 3, inclusionProof: good.inclusionProof, note: good.note).bytes,
            check: "inclusion",
            message: "as leaf 3 to the root of the checkpoint's tree of size 7"
        )
        var hashes = good.inclusionProof
        hashes[1][5] ^= 0x80
        try await expectRefused(
            fixture,
            TlogProof(extra: good.extra, index: 2, inclusionProof: hashes, note: good.note).bytes,
            check: "inclusion",
            message: "as leaf 2 to the root of the checkpoint's tree of size 7"
        )
        try await expectRefused(
            fixture,
            TlogProof(extra: good.extra, index: 2, inclusionProof: Array(hashes.dropLast()), note: good.note).bytes,
            check: "inclusion",
            message: "the proof has 2 hashes where the sizes call for 3"
        )
        // Index 9 of a tree of 7.
        try await expectRefused(
            fixture,
            TlogProof(extra: good.extra, index: 9, inclusionProof: good.inclusionProof, note: good.note).bytes,
            check: "inclusion",
            message: "leaf index 9 is not below the tree size 7"
        )
    }

    @Test("a checkpoint signed by another key, of another log, or under another key name")
    func checkpointDamage() async throws {
        let fixture = try await ProofFixture.make()
        try await expectRefused(
            fixture,
            fixture.proof(index: 1, note: fixture.checkpoint(key: Curve25519.Signing.PrivateKey())).bytes,
            check: "checkpoint-signature",
            message: "the checkpoint is not signed by the collector key: no signature is from \(fixture.origin)"
        )
        let otherLog = ProofFixture.name + "/" + String(repeating: "ab", count: 16)
        try await expectRefused(
            fixture,
            fixture.proof(index: 1, note: fixture.checkpoint(origin: otherLog)).bytes,
            check: "origin",
            message: "origin \"\(otherLog)\" is not <collector name>/\(Hex.encode(fixture.logId))"
        )
        // The collector's key, but a signature under a name other than the origin.
        let text = try Checkpoint(origin: fixture.origin, size: 7, rootHash: fixture.tree.root()!).text
        let misnamed = try SignedNote(
            signing: text,
            with: [NoteSigner(name: "elsewhere.test", privateKey: fixture.collectorKey)]
        )
        try await expectRefused(
            fixture,
            fixture.proof(index: 1, note: misnamed).bytes,
            check: "checkpoint-signature",
            message: "it is signed by elsewhere.test"
        )
        // A signature line of the collector's key and name whose bytes were changed.
        var note = try fixture.checkpoint()
        var signature = note.signatures[0].signature
        signature[0] ^= 0x01
        note = try SignedNote(
            text: note.text,
            signatures: [
                SignedNote.Signature(keyName: fixture.origin, keyID: note.signatures[0].keyID, signature: signature)
            ]
        )
        try await expectRefused(
            fixture,
            fixture.proof(index: 1, note: note).bytes,
            check: "checkpoint-signature",
            message: "does not verify: the note was altered"
        )
    }

    @Test("the device public key file of another log: refused by its log id, or by the key it lacks")
    func deviceKeyOfAnotherLog() async throws {
        let fixture = try await ProofFixture.make()
        let other = try await ProofFixture.make(events: 1)
        let bytes = try fixture.proof(index: 4).bytes
        try await expectRefused(
            fixture,
            bytes,
            check: "device-key",
            message: "the device public key file is of log \(Hex.encode(other.logId))",
            publicKey: other.devicePublicKey
        )
        // A JSON key file whose logId is not one: the file cannot be used (exit 2), nothing is said of the proof.
        let badLogId = try other.write(Array(#"{"keys":[],"logId":"zz","v":1}"#.utf8), "bad-log-id.json")
        let unreadable = try await CLIHarness.run(
            "auditctl",
            [
                "verify-proof", fixture.write(bytes, "any.proof"), "--collector-key", fixture.collectorPublicKey,
                "--public-key", badLogId,
            ]
        )
        #expect(unreadable.status == 2, "\(unreadable.stdout) \(unreadable.stderr)")
        #expect(unreadable.stdout.isEmpty)
        let otherLog = try CLIHarness.openLog(other.state)
        let bare = try other.write(
            Array((Hex.encode(try otherLog.activeSigningKey().publicKey.rawRepresentation) + "\n").utf8),
            "bare.keys"
        )
        try await expectRefused(
            fixture,
            bytes,
            check: "device-key",
            message: "which the device public key file does not hold",
            publicKey: bare
        )
    }

    @Test("a truncated file, a file without the entry, an entry that is not one")
    func damagedFiles() async throws {
        let fixture = try await ProofFixture.make()
        let good = try fixture.proof(index: 5)
        let bytes = good.bytes
        for cut in [bytes.count - 1, bytes.count - 30, bytes.count / 2, 30, 10, 0] {
            try await expectRefused(
                fixture,
                Array(bytes.prefix(cut)),
                check: "file",
                message: "the file is not a tlog proof: "
            )
        }
        try await expectRefused(
            fixture,
            TlogProof(index: 5, inclusionProof: good.inclusionProof, note: good.note).bytes,
            check: "file",
            message: "the proof carries no entry"
        )
        try await expectRefused(
            fixture,
            TlogProof(
                extra: Array(good.extra.dropLast()),
                index: 5,
                inclusionProof: good.inclusionProof,
                note: good.note
            )
            .bytes,
            check: "entry",
            message: "the proof's extra data is not a well-formed entry"
        )
    }

    @Test("--decrypt: the event with the state directory's data keys or a --data-key file; without the key, exit 2")
    func decrypt() async throws {
        let fixture = try await ProofFixture.make()
        let file = try fixture.write(fixture.proof(index: 3).bytes, "good.proof")
        let withState = try await fixture.verifyProof(file, ["--decrypt", "--state-dir", fixture.state])
        #expect(withState.status == 0, "\(withState.stdout) \(withState.stderr)")
        #expect(withState.stdout.contains(#"event: {"attributes":{"unlockDurationMs":2},"#))
        #expect(withState.stdout.contains(#""type":"BIOMETRIC_AUTH_SUCCESS""#))

        let copy = fixture.path("investigator.key")
        try FileManager.default.copyItem(atPath: try CLIHarness.dataKeyPath(fixture.state), toPath: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: copy)
        let withFile = try await fixture.verifyProof(file, ["--decrypt", "--data-key", copy, "--json"])
        #expect(withFile.status == 0, "\(withFile.stdout) \(withFile.stderr)")
        let event = try JSONValue(parsing: Array(withFile.stdout.utf8)).objectValue?["entry"]?.objectValue?["event"]
        #expect(event?.objectValue?["type"] == .string("BIOMETRIC_AUTH_SUCCESS"))

        let withoutDecrypt = try await fixture.verifyProof(file, ["--data-key", copy])
        #expect(withoutDecrypt.status == 2)
        #expect(withoutDecrypt.stderr.contains("--data-key goes with --decrypt"))

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy)
        let unsafe = try await fixture.verifyProof(file, ["--decrypt", "--data-key", copy])
        #expect(unsafe.status == 2)
        #expect(unsafe.stderr.contains("chmod 600"))

        let other = try await ProofFixture.make(events: 1)
        let wrongKeys = try await fixture.verifyProof(file, ["--decrypt", "--state-dir", other.state])
        #expect(wrongKeys.status == 2, "\(wrongKeys.stdout) \(wrongKeys.stderr)")
        #expect(wrongKeys.stdout.contains("OK: entry seq 3"))
        #expect(wrongKeys.stdout.contains("event: <no data key"))
        #expect(wrongKeys.stderr.contains("cannot decrypt the event: no data key"))
        #expect(!wrongKeys.stdout.contains("BIOMETRIC_AUTH_SUCCESS"))
    }
}

/// Proofs of format version 2 entries (docs/PROOFS.md): an entry without a signature of its own travels with the
/// entries after it up to the one whose signature covers it.
@Suite("verify-proof on format version 2")
struct VerifyProofVersion2Tests {
    @Test("an unsigned entry with its covering entries verifies; alone, with one missing or altered, it does not")
    func coveringRun() async throws {
        let fixture = try await ProofFixture.make(events: 6, formatVersion: FormatConstants.version2)
        // One commit: seqs 1-5 carry no signature, seq 6 carries the commit's.
        #expect(!SealedEntry.carriesSignature(serialized: fixture.entries[3]))
        #expect(SealedEntry.carriesSignature(serialized: fixture.entries[6]))
        let good = try fixture.write(
            fixture.proof(index: 3, extra: CoveringRun.serialize(Array(fixture.entries[3...6]))).bytes,
            "covered.proof"
        )
        let accepted = try await fixture.verifyProof(good)
        #expect(accepted.status == 0, "\(accepted.stdout) \(accepted.stderr)")
        #expect(accepted.stdout.contains("OK: entry seq 3"))

        let alone = try fixture.write(fixture.proof(index: 3).bytes, "alone.proof")
        let refusedAlone = try await fixture.verifyProof(alone)
        #expect(refusedAlone.status == 1 && refusedAlone.stdout.contains("FAILED (entry-signature)"))

        let skipping = [fixture.entries[3], fixture.entries[4], fixture.entries[6]]
        let gap = try fixture.write(fixture.proof(index: 3, extra: CoveringRun.serialize(skipping)).bytes, "gap.proof")
        #expect(try await fixture.verifyProof(gap).stdout.contains("FAILED (entry-signature)"))

        var altered = Array(fixture.entries[3...6])
        altered[2][39] ^= 0x01
        let broken = try fixture.write(
            fixture.proof(index: 3, extra: CoveringRun.serialize(altered)).bytes,
            "broken.proof"
        )
        #expect(try await fixture.verifyProof(broken).stdout.contains("FAILED (entry-signature)"))

        let trailing = try fixture.write(
            fixture.proof(index: 3, extra: CoveringRun.serialize(Array(fixture.entries[3...6])) + [0x41]).bytes,
            "trailing.proof"
        )
        #expect(try await fixture.verifyProof(trailing).stdout.contains("FAILED (entry)"))
    }
}
