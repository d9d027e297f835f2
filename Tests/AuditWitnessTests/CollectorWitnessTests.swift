import AuditChain
import AuditCollector
import AuditWire
import AuditWitness
import Crypto
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// A collector configured with a witness (docs/WITNESS.md): its version 2 answers carry the
/// witness's cosignature, a witness that is down costs only the cosignature, and a collector that rewrote its tree
/// gets none.
@Suite("A collector with a witness")
struct CollectorWitnessTests {
    /// Runs `body` with a collector whose key exists before it starts, and a witness of it.
    static func run(
        _ body: (CollectorClient, Collector, WitnessService, WitnessEndpoint, String) async throws -> Void
    )
        async throws
    {
        let directory = CollectorTempDir()
        let key = try CollectorKeyFile.loadOrCreate(path: CollectorKeyFile.defaultPath(database: directory.database))
        let witness = try WitnessService(logName: Collector.defaultName, logKey: key.publicKey)
        let endpoint = try await witness.start()
        defer { Task { await witness.stop() } }
        // A witness request may take an hour: longer than the client waits for an answer (CollectorClient, 90 s), so
        // an answer at all says that the collector did not wait a witness request out.
        try await withCollector(directory, witnesses: [endpoint], witnessTimeout: .seconds(3600)) { client, collector in
            try await body(client, collector, witness, endpoint, directory.database)
        }
        await witness.stop()
    }

    /// Posts `seqs` of `chain` in version 2 with `treeSize`; returns the receipt's checkpoint note.
    static func post(
        _ chain: CollectorChain,
        _ seqs: [Int],
        treeSize: UInt64?,
        _ client: CollectorClient
    ) async throws
        -> SignedNote
    {
        var batch = chain.batch(seqs)
        batch.version = SyncWire.treeVersion
        batch.treeSize = treeSize
        let reply = try await client.post(batch)
        #expect(reply.status == 200)
        let receipt = try #require(reply.response?.treeReceipt)
        return try SignedNote(parsing: Array(receipt.checkpoint.utf8))
    }

    @Test func versionTwoAnswersCarryTheWitnessCosignature() async throws {
        try await Self.run { client, collector, _, endpoint, _ in
            var chain = CollectorChain()
            chain.appendEvents(4)
            let first = try await Self.post(chain, Array(0...2), treeSize: nil, client)
            #expect(first.signatures.count == 2)
            #expect(try endpoint.key.verify(first).count == 1)
            // Still a valid checkpoint note of the collector.
            let origin = collector.origin(logId: chain.logId)
            let logKey = try NoteVerifierKey(name: origin, publicKey: collector.receiptKey.publicKey)
            #expect(try Checkpoint(signedNote: first, origin: origin, keys: [logKey]).size == 3)
            chain.appendEvents(3)
            let second = try await Self.post(chain, Array(3...7), treeSize: 3, client)
            #expect(try endpoint.key.verify(second).count == 1)
            #expect(try await collector.store.witnessedSize(witness: endpoint.key.vkey, logId: chain.logId) == 8)
            // A version 1 answer asks no witness.
            var legacy = chain.batch([7])
            legacy.version = 1
            #expect(try await client.post(legacy).status == 200)
        }
    }

    @Test func aWitnessThatLostItsStateIsCaughtUpAfterA409() async throws {
        try await Self.run { client, collector, witness, endpoint, _ in
            var chain = CollectorChain()
            chain.appendEvents(2)
            _ = try await Self.post(chain, [0, 1], treeSize: nil, client)
            // The witness forgets (a new database); the collector still thinks it cosigned 2: a 409 says 0.
            await witness.stop()
            try FileManager.default.removeItem(atPath: witness.configuration.databasePath)
            try await witness.start()
            chain.appendEvents(2)
            let note = try await Self.post(chain, [2, 3, 4], treeSize: 2, client)
            #expect(try endpoint.key.verify(note).count == 1)
            #expect(try await collector.store.witnessedSize(witness: endpoint.key.vkey, logId: chain.logId) == 5)
        }
    }

    @Test func aWitnessThatIsDownCostsOnlyItsCosignature() async throws {
        try await Self.run { client, collector, witness, endpoint, _ in
            var chain = CollectorChain()
            chain.appendEvents(2)
            await witness.stop()
            // A refused connection, not the hour's witness timeout of `run`: answered, without the cosignature.
            let note = try await Self.post(chain, [0, 1, 2], treeSize: nil, client)
            #expect(note.signatures.count == 1)
            #expect(try endpoint.key.verify(note).isEmpty)
            // Back up, it cosigns the next answer from its empty state.
            try await witness.start()
            chain.appendEvents(1)
            let next = try await Self.post(chain, [3], treeSize: 3, client)
            #expect(try endpoint.key.verify(next).count == 1)
            _ = collector
        }
    }

    @Test func aCollectorThatRewroteItsTreeGetsNoCosignature() async throws {
        try await Self.run { client, collector, witness, endpoint, database in
            var chain = CollectorChain()
            chain.appendEvents(3)
            _ = try await Self.post(chain, Array(0...3), treeSize: nil, client)
            // Rewrite the first stored leaf hash: every later root is of another history.
            let queue = try DatabaseQueue(path: database)
            try await queue.write { db in
                let row = try #require(
                    try Row.fetchOne(db, sql: "SELECT hashes FROM tree_tiles WHERE level = 0 AND idx = 0")
                )
                var hashes: [UInt8] = Array(row["hashes"] as Data)
                hashes[0] ^= 0xFF
                try db.execute(
                    sql: "UPDATE tree_tiles SET hashes = ? WHERE level = 0 AND idx = 0",
                    arguments: [Data(hashes)]
                )
            }
            try queue.close()
            chain.appendEvents(2)
            let note = try await Self.post(chain, [4, 5], treeSize: 4, client)
            // The collector signed it, the witness refused it: the split view stops at the witness.
            #expect(note.signatures.count == 1)
            #expect(try endpoint.key.verify(note).isEmpty)
            #expect(try await collector.store.witnessedSize(witness: endpoint.key.vkey, logId: chain.logId) == 4)
            let state = try await WitnessStore(path: witness.configuration.databasePath)
                .state(origin: collector.origin(logId: chain.logId))
            #expect(state?.size == 4)
        }
    }

    @Test func witnessSettingsAreParsedStrictly() throws {
        let key = try CosignatureSigner(name: "witness.example/w1", privateKey: .init()).verifierKey
        let endpoint = try WitnessEndpoint(parsing: "http://127.0.0.1:9/w=1=" + key.vkey)
        #expect(endpoint.url == "http://127.0.0.1:9/w=1" && endpoint.key == key)
        #expect(try WitnessEndpoint(parsing: "https://w.example/=" + key.vkey).url == "https://w.example")
        for text in [
            "", key.vkey, "http://127.0.0.1:9", "ftp://x=" + key.vkey, "http://=" + key.vkey,
            "http://x=" + key.vkey.replacingOccurrences(of: "+B", with: "+A"),
        ] {
            #expect(throws: CollectorError.self) { try WitnessEndpoint(parsing: text) }
        }
    }
}
