import AuditChain
import AuditCollector
import AuditWire
import Crypto
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// Each log's Merkle tree at the collector (docs/TRANSPARENCY.md): its leaves are the serialized entries the
/// contiguous head covers, in seq order; it grows in the ingest transaction and its proofs verify.
@Suite struct CollectorTreeTests {
    /// The reference tree of these entries' serialized bytes.
    static func reference(_ entries: [SealedEntry]) -> MerkleTree {
        MerkleTree(leaves: entries.map(\.serialized))
    }

    @Test(
        "the tree holds the entries the head covers, in order; every proof verifies against its root",
        arguments: CollectorEngine.underTest
    )
    func growsWithTheHead(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(9)  // 1...9
        try await withCollector(directory) { client, collector in
            _ = try #require(try await client.post(chain.batch([0, 1, 2, 3, 4])).response)
            let first = try await collector.store.treeHead(logId: chain.logId)
            #expect(first.size == 5)
            #expect(first.root == Self.reference(Array(chain.entries[0...4])).root())

            // 8 and 9 wait beyond the gap at 5...7; the tree does not take them.
            _ = try #require(try await client.post(chain.batch([8, 9])).response)
            #expect(try await collector.store.treeHead(logId: chain.logId).size == 5)

            _ = try #require(try await client.post(chain.batch([5, 6, 7])).response)
            let second = try await collector.store.treeHead(logId: chain.logId)
            let reference = Self.reference(chain.entries)
            #expect(second.size == 10)
            #expect(second.root == reference.root())

            for index in 0..<second.size {
                let proof = try await collector.store.inclusionProof(
                    logId: chain.logId,
                    index: index,
                    size: second.size
                )
                #expect(proof == reference.inclusionProof(index: index, size: second.size))
                try MerkleProof.verifyInclusion(
                    leafHash: MerkleHash.leaf(chain.entries[Int(index)].serialized),
                    index: index,
                    size: second.size,
                    proof: proof,
                    root: second.root
                )
            }
            let consistency = try await collector.store.consistencyProof(logId: chain.logId, first: 5, second: 10)
            try MerkleProof.verifyConsistency(
                first: 5,
                second: 10,
                firstRoot: first.root,
                secondRoot: second.root,
                proof: consistency
            )
            await #expect(throws: MerkleNodes.OutOfRange.self) {
                try await collector.store.inclusionProof(logId: chain.logId, index: 10, size: 10)
            }
            await #expect(throws: MerkleNodes.OutOfRange.self) {
                try await collector.store.consistencyProof(logId: chain.logId, first: 5, second: 11)
            }
        }
    }

    @Test(
        "entries the device accounted as removed are not leaves; the tree passes the bridged gap",
        arguments: CollectorEngine.underTest
    )
    func removedEntriesAreNotLeaves(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(5)  // 1...5
        chain.appendRemoval(first: 3, last: 4)  // 6
        chain.appendEvents(1)  // 7
        try await withCollector(directory) { client, collector in
            _ = try #require(try await client.post(chain.batch([0, 1, 2, 5, 6, 7])).response)
            let head = try await collector.store.treeHead(logId: chain.logId)
            let held = [0, 1, 2, 5, 6, 7].map { chain.entries[$0] }
            #expect(head.size == 6)
            #expect(head.root == Self.reference(held).root())
        }
    }

    @Test("a database from before the tree gets its whole tree at the log's next batch")
    func olderDatabaseBuildsItsTree() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(6)
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch([0, 1, 2, 3])).response)
        }
        // As an older collector left it: entries and head, no tree.
        let queue = try DatabaseQueue(path: directory.database)
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM trees; DELETE FROM tree_tiles")
        }
        try await withCollector(directory) { client, collector in
            #expect(try await collector.store.treeHead(logId: chain.logId).size == 0)
            _ = try #require(try await client.post(chain.batch([4, 5, 6])).response)
            let head = try await collector.store.treeHead(logId: chain.logId)
            #expect(head.size == 7)
            #expect(head.root == Self.reference(chain.entries).root())
        }
    }
}

/// `GET /v1/logs/{logId}/checkpoint`: the log's tree head as a C2SP checkpoint signed by the collector's key.
@Suite struct CollectorCheckpointNoteTests {
    @Test(
        "the checkpoint note verifies with the collector's key under the log's origin, and grows consistently",
        arguments: CollectorEngine.underTest
    )
    func signedAndConsistent(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(6)
        let path = "/v1/logs/\(Hex.encode(chain.logId))/checkpoint"
        try await withCollector(directory, token: "secret") { client, collector in
            #expect(try await client.send("GET", path).status == 404)
            #expect(try await CollectorClient(port: client.port, token: nil).send("GET", path).status == 401)
            #expect(try await client.send("GET", "/v1/logs/abcd/checkpoint").status == 400)

            _ = try #require(try await client.post(chain.batch([0, 1, 2])).response)
            let key = try NoteVerifierKey(
                name: "audit-collector.localhost/" + Hex.encode(chain.logId),
                publicKey: try await client.collectorKey()
            )
            let firstNote = try SignedNote(parsing: try await client.send("GET", path).body)
            let first = try Checkpoint(signedNote: firstNote, origin: key.name, keys: [key])
            #expect(first.size == 3)
            #expect(first.rootHash == MerkleTree(leaves: chain.entries[0...2].map(\.serialized)).root())

            _ = try #require(try await client.post(chain.batch([3, 4, 5, 6])).response)
            let second = try Checkpoint(
                signedNote: try SignedNote(parsing: try await client.send("GET", path).body),
                origin: key.name,
                keys: [key]
            )
            #expect(second.size == 7)
            try MerkleProof.verifyConsistency(
                first: first.size,
                second: second.size,
                firstRoot: first.rootHash,
                secondRoot: second.rootHash,
                proof: try await collector.store.consistencyProof(
                    logId: chain.logId,
                    first: first.size,
                    second: second.size
                )
            )

            // Another key under the same name does not verify it.
            let other = try NoteVerifierKey(name: key.name, publicKey: Curve25519.Signing.PrivateKey().publicKey)
            #expect(throws: (any Error).self) {
                try Checkpoint(signedNote: firstNote, origin: key.name, keys: [other])
            }
        }
    }
}

/// Version 2's receipt (docs/PROTOCOL.md section 3.2): the ingest answer carries the tree's signed checkpoint, the
/// inclusion of the head's entry as its last leaf, and the consistency from the batch's `treeSize`.
@Suite struct CollectorTreeReceiptTests {
    /// Checks a receipt as the agent does, from the chain's own entries; returns its checkpoint.
    static func verify(
        _ receipt: TreeReceipt,
        chain: CollectorChain,
        key: Curve25519.Signing.PublicKey,
        previous: Checkpoint?
    ) throws -> Checkpoint {
        let origin = "audit-collector.localhost/" + Hex.encode(chain.logId)
        let checkpoint = try Checkpoint(
            signedNote: try SignedNote(parsing: Array(receipt.checkpoint.utf8)),
            origin: origin,
            keys: [try NoteVerifierKey(name: origin, publicKey: key)]
        )
        let entry = chain.entries[Int(receipt.seq)]
        #expect(receipt.entryHash == entry.entryHash)
        #expect(receipt.leafIndex == checkpoint.size - 1)
        try MerkleProof.verifyInclusion(
            leafHash: MerkleHash.leaf(entry.serialized),
            index: receipt.leafIndex,
            size: checkpoint.size,
            proof: receipt.inclusion,
            root: checkpoint.rootHash
        )
        if let previous, previous.size < checkpoint.size {
            let consistency = try #require(receipt.consistency)
            #expect(consistency.from == previous.size)
            try MerkleProof.verifyConsistency(
                first: previous.size,
                second: checkpoint.size,
                firstRoot: previous.rootHash,
                secondRoot: checkpoint.rootHash,
                proof: consistency.proof
            )
        }
        return checkpoint
    }

    @Test(
        "each answer's checkpoint verifies, proves the head's entry, and extends the size the batch stated",
        arguments: CollectorEngine.underTest
    )
    func receiptsProveAndExtend(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(9)  // 1...9
        chain.appendRemoval(first: 8, last: 9)  // 10: accounts for 8 and 9, never delivered
        chain.appendEvents(3)  // 11...13
        try await withCollector(directory) { client, _ in
            let key = try await client.collectorKey()
            var previous: Checkpoint?
            for seqs in [[0, 1, 2], [3], [4, 5, 6, 7, 10], [11, 12, 13]] {
                var batch = chain.batch(seqs)
                batch.treeSize = previous?.size
                let reply = try #require(try await client.post(batch).response)
                #expect(reply.version == SyncWire.treeVersion)
                let receipt = try #require(reply.treeReceipt)
                #expect(receipt.seq == UInt64(seqs.last!))
                previous = try Self.verify(receipt, chain: chain, key: key, previous: previous)
            }
            // 14 entries less the two removed ones.
            #expect(previous?.size == 12)
            // The same size again: no proof needed, the same root; a size beyond the tree gets no proof.
            var same = chain.batch([13])
            same.treeSize = 12
            let again = try #require(try await client.post(same).response?.treeReceipt)
            #expect(again.consistency == nil)
            #expect(try Self.verify(again, chain: chain, key: key, previous: previous).rootHash == previous?.rootHash)
            var beyond = chain.batch([13])
            beyond.treeSize = 1000
            #expect(try await client.post(beyond).response?.treeReceipt?.consistency == nil)
        }
    }

    @Test("a database from before the tree answers a replayed batch with a receipt of the whole tree")
    func olderDatabaseAnswersWithATree() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(4)
        try await withCollector(directory) { client, _ in
            _ = try #require(try await client.post(chain.batch()).response)
        }
        let queue = try DatabaseQueue(path: directory.database)
        try await queue.write { db in try db.execute(sql: "DELETE FROM trees; DELETE FROM tree_tiles") }
        try await withCollector(directory) { client, _ in
            // The same batch again is replayed from the stored results, which builds no tree; the answer does.
            let receipt = try #require(try await client.post(chain.batch()).response?.treeReceipt)
            let checkpoint = try Self.verify(receipt, chain: chain, key: try await client.collectorKey(), previous: nil)
            #expect(checkpoint.size == 5)
        }
    }
}
