import AuditWitness
import Crypto
import Testing
import TransparencyLog

/// The witness's add-checkpoint rules (c2sp.org/tlog-witness), each status the spec lists, and its state.
@Suite("The witness (add-checkpoint)")
struct WitnessTests {
    static func cosignature(_ answer: Witness.Answer, _ fixture: WitnessFixture, _ note: SignedNote) throws -> UInt64 {
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let lines = try AddCheckpointResponse.cosignatures(parsing: answer.body)
        let cosigned = try SignedNote(text: note.text, signatures: note.signatures + lines)
        let timestamps = try fixture.witness.signer.verifierKey.verify(cosigned)
        #expect(timestamps == [1_800_000_000])
        return timestamps[0]
    }

    @Test func aFirstCheckpointThenConsistentGrowthAreCosigned() async throws {
        let fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(20)
        _ = try Self.cosignature(
            await fixture.add(try fixture.request(tree, old: 0, size: 3)),
            fixture,
            try fixture.checkpoint(tree, size: 3)
        )
        for (old, new) in [(3, 4), (4, 4), (4, 11), (11, 20)] {
            _ = try Self.cosignature(
                await fixture.add(try fixture.request(tree, old: old, size: new)),
                fixture,
                try fixture.checkpoint(tree, size: new)
            )
        }
        let state = try await fixture.witness.store.state(origin: fixture.origin)
        #expect(state == WitnessCheck.State(size: 20, rootHash: tree.root(size: 20)!))
    }

    @Test func aStaleOldSizeGets409WithTheWitnessSize() async throws {
        let fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(10)
        #expect(await fixture.add(try fixture.request(tree, old: 0, size: 5)).status == 200)
        for old in [0, 3, 4] {
            let answer = await fixture.add(try fixture.request(tree, old: old, size: 8))
            #expect(answer.status == 409)
            #expect(answer.contentType == "text/x.tlog.size")
            #expect(try AddCheckpointResponse.size(parsing: answer.body) == 5)
        }
        // Retried from the witness's size, it is cosigned.
        #expect(await fixture.add(try fixture.request(tree, old: 5, size: 8)).status == 200)
    }

    @Test func anInconsistentTreeIsRefusedWith422AndTheStateKept() async throws {
        let fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(10)
        #expect(await fixture.add(try fixture.request(tree, old: 0, size: 4)).status == 200)
        // Another history that agrees on nothing: its own proof from 4 does not lead from the cosigned root.
        let fork = WitnessFixture.tree(10, salt: "x")
        let answer = await fixture.add(try fixture.request(fork, old: 4, size: 9))
        #expect(answer.status == 422)
        // A proof cut short, or one of another size, is refused too.
        var request = try AddCheckpointRequest(parsing: try fixture.request(tree, old: 4, size: 9))
        request = try AddCheckpointRequest(
            oldSize: 4,
            proof: Array(request.proof.dropLast()),
            checkpoint: request.checkpoint
        )
        #expect(await fixture.add(request.bytes).status == 422)
        let state = try await fixture.witness.store.state(origin: fixture.origin)
        #expect(state?.size == 4 && state?.rootHash == tree.root(size: 4))
    }

    @Test func aDifferentRootAtTheSameSizeIsRefusedWith409() async throws {
        let fixture = try WitnessFixture()
        #expect(await fixture.add(try fixture.request(WitnessFixture.tree(6), old: 0, size: 6)).status == 200)
        let answer = await fixture.add(try fixture.request(WitnessFixture.tree(6, salt: "y"), old: 6, size: 6))
        #expect(answer.status == 409)
        #expect(answer.contentType != "text/x.tlog.size")
    }

    @Test func unknownOriginsAndKeysAreRefused() async throws {
        let fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(3)
        for origin in [
            "other.example/" + WitnessFixture.logHex, WitnessFixture.logName + "/" + WitnessFixture.logHex.uppercased(),
            WitnessFixture.logName + "/" + WitnessFixture.logHex + "00", WitnessFixture.logName + "/abc",
            WitnessFixture.logName + "x/" + WitnessFixture.logHex, WitnessFixture.logName,
        ] {
            #expect(await fixture.add(try fixture.request(tree, old: 0, size: 3, origin: origin)).status == 404)
        }
        // Signed by another key: 403, and nothing recorded.
        let forged = try AddCheckpointRequest(
            oldSize: 0,
            proof: [],
            checkpoint: try fixture.checkpoint(tree, size: 3, key: Curve25519.Signing.PrivateKey())
        )
        #expect(await fixture.add(forged.bytes).status == 403)
        #expect(try await fixture.witness.store.state(origin: fixture.origin) == nil)
    }

    @Test func malformedRequestsGet400() async throws {
        let fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(8)
        #expect(await fixture.add(Array("old 0\n".utf8)).status == 400)
        #expect(await fixture.add([]).status == 400)
        // The old size beyond the checkpoint's size.
        let beyond = try AddCheckpointRequest(oldSize: 9, proof: [], checkpoint: try fixture.checkpoint(tree, size: 8))
        #expect(await fixture.add(beyond.bytes).status == 400)
        // An old size of 0 with a proof.
        let proof = tree.consistencyProof(first: 2, second: 8) ?? []
        let zero = try AddCheckpointRequest(oldSize: 0, proof: proof, checkpoint: try fixture.checkpoint(tree, size: 8))
        #expect(await fixture.add(zero.bytes).status == 400)
        // A note the log signed whose text is not a checkpoint.
        let origin = fixture.origin
        let notCheckpoint = try SignedNote(
            signing: origin + "\nnot a size\n",
            with: [NoteSigner(name: origin, privateKey: fixture.logKey)]
        )
        let body = try AddCheckpointRequest(oldSize: 0, proof: [], checkpoint: notCheckpoint).bytes
        #expect(await fixture.add(body).status == 400)
    }

    @Test func theStateSurvivesARestart() async throws {
        var fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(12)
        #expect(await fixture.add(try fixture.request(tree, old: 0, size: 7)).status == 200)
        try fixture.restart()
        let stale = await fixture.add(try fixture.request(tree, old: 0, size: 12))
        #expect(stale.status == 409 && (try? AddCheckpointResponse.size(parsing: stale.body)) == 7)
        #expect(await fixture.add(try fixture.request(tree, old: 7, size: 12)).status == 200)
    }

    @Test func concurrentRequestsFromOneSizeAdvanceOnce() async throws {
        let fixture = try WitnessFixture()
        let tree = WitnessFixture.tree(40)
        #expect(await fixture.add(try fixture.request(tree, old: 0, size: 4)).status == 200)
        let bodies = try (5...20).map { try fixture.request(tree, old: 4, size: $0) }
        let statuses = await withTaskGroup(of: Int.self) { group in
            for body in bodies { group.addTask { await fixture.add(body).status } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count(where: { $0 == 200 }) == 1)
        #expect(statuses.count(where: { $0 == 409 }) == bodies.count - 1)
    }
}
