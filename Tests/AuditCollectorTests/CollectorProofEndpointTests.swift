import AuditChain
import AuditCollector
import Foundation
import Testing
import TestKit
import TransparencyLog

/// `GET /v1/logs/{logId}/proof?seq=N` and `…/proof/consistency?from=M[&to=N]` (docs/COLLECTOR-API.md section 2).
@Suite struct CollectorProofEndpointTests {
    /// 0 ... 20 with a removal record of 3 ... 4 at 6.
    static func chain() -> CollectorChain {
        var chain = CollectorChain()
        chain.appendEvents(5)  // 1...5
        chain.appendRemoval(first: 3, last: 4)  // 6
        chain.appendEvents(14)  // 7...20
        return chain
    }

    @Test(
        "each leaf's proof verifies against the signed checkpoint it carries; the answer is canonical JSON",
        arguments: CollectorEngine.underTest
    )
    func inclusionProofsVerify(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let chain = Self.chain()
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch([0, 1, 2] + Array(5...12) + Array(14...20))).response)
            _ = try #require(try await client.post(chain.batch([3])).response)
            let reader = TreeReader(client: client, logId: chain.logId)
            let (checkpoint, key) = try await reader.checkpoint()
            let leaves = [0, 1, 2] + Array(5...12)
            #expect(checkpoint.size == UInt64(leaves.count))
            for (index, seq) in leaves.enumerated() {
                let reply = try await client.send("GET", reader.prefix + "proof?seq=\(seq)")
                #expect(reply.status == 200)
                #expect(reply.headers["content-type"] == "application/json")
                #expect(reply.headers["cache-control"] == "no-store")
                let json = try JSONValue(parsing: reply.body)
                #expect(reply.body == json.canonicalBytes + [0x0a])
                let answer = try InclusionAnswer(json)
                #expect(answer.logId == chain.logId && answer.seq == UInt64(seq))
                #expect(answer.leafIndex == UInt64(index) && answer.treeSize == checkpoint.size)
                #expect(answer.entry == chain.entries[seq].serialized)
                #expect(answer.note.bytes == (try await client.send("GET", reader.prefix + "checkpoint")).body)
                try answer.verify(key: key)
                // Another key, or the entry's neighbour at the same index, does not verify.
                let other = try NoteVerifierKey(name: key.name, publicKey: SigningKey.generate().publicKey)
                #expect(throws: (any Error).self) { try answer.verify(key: other) }
                var moved = answer
                moved.entry = chain.entries[seq == 20 ? 19 : seq + 1].serialized
                #expect(throws: (any Error).self) { try moved.verify(key: key) }
            }
        }
    }

    @Test(
        "404 says which: unknown log, entry not held, not in the tree yet, not a leaf",
        arguments: CollectorEngine.underTest
    )
    func missingLeavesGet404WithTheirReason(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let chain = Self.chain()
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch([0, 1, 2] + Array(5...12) + Array(14...20))).response)
            _ = try #require(try await client.post(chain.batch([3])).response)
            let log = "/v1/logs/\(Hex.encode(chain.logId))/proof?seq="
            let unknown = "/v1/logs/\(Hex.encode([UInt8](repeating: 0xAB, count: 16)))/proof?seq=0"
            let cases: [(String, String)] = [
                (unknown, "unknownLog"), (log + "4", "notHeld"), (log + "13", "notHeld"),
                (log + "\(UInt64.max)", "notHeld"), (log + "15", "notInTreeYet"), (log + "3", "notALeaf"),
            ]
            for (path, reason) in cases {
                let reply = try await client.send("GET", path)
                #expect(reply.status == 404, "\(path)")
                #expect(reply.json?.objectValue?["reason"] == .string(reason), "\(path): \(reply.error ?? "")")
                #expect(reply.error?.isEmpty == false)
                #expect(reply.headers["cache-control"] == "no-store")
            }
            // Once the gap closes, 15 is a leaf; 3 never is.
            _ = try #require(try await client.post(chain.batch([13])).response)
            #expect(try InclusionAnswer(try await client.send("GET", log + "15").json).leafIndex == 13)
            #expect(try await client.send("GET", log + "3").status == 404)
        }
    }

    @Test("a missing, repeated or malformed seq or log id gets 400", arguments: CollectorEngine.underTest)
    func malformedQueriesGet400(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let chain = Self.chain()
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch([0, 1])).response)
            let log = "/v1/logs/\(Hex.encode(chain.logId))/"
            let queries = [
                "proof", "proof?", "proof?seq", "proof?seq=", "proof?seq=-1", "proof?seq=%2B1", "proof?seq=01",
                "proof?seq=1e3", "proof?seq=0x1", "proof?seq=1.0", "proof?seq=%201", "proof?seq=1%20",
                "proof?seq=18446744073709551616", "proof?seq=99999999999999999999999", "proof?seq=1&seq=1",
                "proof?sequence=1", "proof?seq=%FF",
            ]
            for query in queries {
                let reply = try await client.send("GET", log + query)
                #expect(reply.status == 400, "\(query): \(reply.status)")
                #expect(reply.error?.isEmpty == false, "\(query)")
            }
            #expect(try await client.send("GET", "/v1/logs/abc/proof?seq=1").status == 400)
            #expect(try await client.send("GET", log + "proof?seq=1&other=x").status == 200)
        }
    }

    @Test(
        "consistency proofs between checkpoints fetched before and after a batch verify",
        arguments: CollectorEngine.underTest
    )
    func consistencyBetweenCheckpoints(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(40)
        try await withCollector(directory) { client, _ in
            let reader = TreeReader(client: client, logId: chain.logId)
            let path = reader.prefix + "proof/consistency"
            var checkpoints: [Checkpoint] = []
            for through in [2, 3, 17, 32, 40] {
                let from = checkpoints.last.map { Int($0.size) } ?? 0
                _ = try #require(try await client.post(chain.batch(Array(from...through))).response)
                checkpoints.append(try await reader.checkpoint().0)
            }
            let latest = try #require(checkpoints.last)
            for (older, newer) in Array(zip(checkpoints, checkpoints.dropFirst())) + [(checkpoints[0], latest)] {
                for query in ["?from=\(older.size)&to=\(newer.size)", "?to=\(newer.size)&from=\(older.size)"] {
                    let reply = try await client.send("GET", path + query)
                    #expect(reply.status == 200 && reply.headers["cache-control"] == "no-store")
                    let proof = try Self.consistency(reply, logId: chain.logId, from: older.size, to: newer.size)
                    try MerkleProof.verifyConsistency(
                        first: older.size,
                        second: newer.size,
                        firstRoot: older.rootHash,
                        secondRoot: newer.rootHash,
                        proof: proof
                    )
                }
            }
            // `to` defaults to the tree's size; equal sizes give an empty proof.
            let current = try await client.send("GET", path + "?from=\(checkpoints[1].size)")
            let proof = try Self.consistency(current, logId: chain.logId, from: checkpoints[1].size, to: latest.size)
            try MerkleProof.verifyConsistency(
                first: checkpoints[1].size,
                second: latest.size,
                firstRoot: checkpoints[1].rootHash,
                secondRoot: latest.rootHash,
                proof: proof
            )
            for query in ["?from=\(latest.size)", "?from=5&to=5", "?from=1&to=1"] {
                let reply = try await client.send("GET", path + query)
                #expect(reply.status == 200 && reply.json?.objectValue?["proof"] == .array([]), "\(query)")
            }
            // 400: a from of 0, above to, missing, repeated or not a plain decimal; 404: beyond the tree.
            for query in [
                "", "?to=5", "?from=0", "?from=0&to=0", "?from=6&to=5", "?from=\(latest.size + 1)", "?from=a",
                "?from=1&to=", "?from=1&to=-1", "?from=01&to=2", "?from=1&from=1", "?from=1&to=2&to=3",
                "?from=18446744073709551616", "?from=1&to=18446744073709551616", "?from=%2B1",
            ] {
                let reply = try await client.send("GET", path + query)
                #expect(reply.status == 400, "\(query): \(reply.status)")
                #expect(reply.error?.isEmpty == false)
            }
            for query in ["?from=1&to=\(latest.size + 1)", "?from=1&to=\(UInt64.max)"] {
                let reply = try await client.send("GET", path + query)
                #expect(reply.status == 404 && reply.json?.objectValue?["reason"] == "beyondTree", "\(query)")
            }
            let unknown = "/v1/logs/\(Hex.encode([UInt8](repeating: 1, count: 16)))/proof/consistency?from=1"
            #expect(try await client.send("GET", unknown).json?.objectValue?["reason"] == "unknownLog")
        }
    }

    /// The proof of a consistency answer, after checking its other members.
    static func consistency(_ reply: CollectorReply, logId: [UInt8], from: UInt64, to: UInt64) throws -> [[UInt8]] {
        let members = try #require(reply.json?.objectValue)
        #expect(Set(members.keys) == ["v", "logId", "from", "to", "proof"])
        #expect(members["v"] == .integer(2) && members["logId"] == .string(Hex.encode(logId)))
        #expect(members["from"] == .integer(Int64(from)) && members["to"] == .integer(Int64(to)))
        guard case .array(let hashes)? = members["proof"] else { return [] }
        return hashes.compactMap { $0.stringValue.flatMap(InclusionAnswer.base64) }
    }
}
