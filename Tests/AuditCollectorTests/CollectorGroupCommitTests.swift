import AuditChain
@testable import AuditCollector
import AuditWire
import Crypto
import Testing
import TestKit
import TransparencyLog

/// Group commit (``CollectorStore/runGroup(_:database:maxIncidents:)``, docs/COLLECTOR.md section 7): concurrent
/// batches share write transactions, each still decided and answered on its own.
@Suite struct CollectorGroupCommitTests {
    /// Sends each chain's entries one per batch, every chain at once, each batch to `collectors` in turn, stating
    /// the tree size of the last checkpoint verified; checks every answer as the agent does.
    static func deliverOneByOne(
        _ chains: [CollectorChain],
        to collectors: [Collector],
        key: Curve25519.Signing.PublicKey
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for (index, chain) in chains.enumerated() {
                tasks.addTask {
                    var previous: Checkpoint?
                    for seq in chain.entries.indices {
                        var batch = chain.batch([seq])
                        batch.treeSize = previous?.size
                        let response = try await collectors[(index + seq) % collectors.count].ingest(batch)
                        #expect(response.results.map(\.status) == [.accepted])
                        let receipt = try #require(response.treeReceipt)
                        #expect(receipt.seq == UInt64(seq))
                        previous = try CollectorTreeReceiptTests.verify(
                            receipt,
                            chain: chain,
                            key: key,
                            previous: previous
                        )
                    }
                }
            }
            try await tasks.waitForAll()
        }
    }

    /// Each chain's tree at the collector is its entries in seq order.
    static func expectTrees(_ chains: [CollectorChain], in store: CollectorStore) async throws {
        for chain in chains {
            let head = try await store.treeHead(logId: chain.logId)
            #expect(head.size == UInt64(chain.entries.count))
            #expect(head.root == CollectorTreeTests.reference(chain.entries).root())
            #expect(try await store.count(logId: chain.logId) == chain.entries.count)
        }
    }

    @Test(
        "one-entry batches of many logs at once: all stored; each answer's checkpoint proves its entry and extends",
        arguments: CollectorEngine.underTest
    )
    func manyLogsAtOnce(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let store = try await directory.openStore()
        let key = SigningKey.generate()
        let collector = Collector(store: store, receiptKey: key)
        let chains = (0..<24).map { _ in
            var chain = CollectorChain()
            chain.appendEvents(6)
            return chain
        }
        try await Self.deliverOneByOne(chains, to: [collector], key: key.publicKey)
        try await Self.expectTrees(chains, in: store)
        await store.close()
    }

    @Test(
        "a batch whose work fails (a corrupt row of its log) fails alone; the others of its group are stored",
        arguments: CollectorEngine.underTest
    )
    func oneFailingLogDoesNotFailTheGroup(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let store = try await directory.openStore()
        let chains = (0..<4).map { _ in
            var chain = CollectorChain()
            chain.appendEvents(2)
            return chain
        }
        let corrupt = chains[2].logId
        try await store.database.write(log: corrupt) { db in
            try db.execute(
                "INSERT INTO keys (logId, keyId, publicKey, fromSeq, untilSeq) VALUES (?, ?, ?, 0, NULL)",
                [.blob(corrupt), .blob(Array(repeating: 7, count: 8)), .blob([1, 2, 3])]
            )
        }
        let requests = chains.map { chain in
            let batch = chain.batch()
            return IngestRequest(
                batch: CollectorStore.BatchKey(batch),
                entries: IncomingEntry.prepare(batch.entries, knownKeys: [:], held: [:]),
                checkpoint: nil,
                trusted: [:],
                receivedAt: AuditTimestamp.now()
            )
        }
        let answers = await CollectorStore.runGroup(requests, database: store.database, maxIncidents: 10)
        #expect(answers.count == 4)
        for (index, answer) in answers.enumerated() {
            if index == 2 {
                #expect(throws: CollectorError.self) { try answer.get() }
                #expect(try await store.count(logId: corrupt) == 0)
                continue
            }
            let outcome = try answer.get()
            #expect(outcome.results.map(\.status) == [.accepted, .accepted, .accepted])
            #expect(outcome.head?.seq == 2)
            #expect(outcome.committed?.tree.size == 3 && outcome.committed?.head.seq == 2)
            #expect(outcome.keys.count == 1)
        }
        try await Self.expectTrees([chains[0], chains[1], chains[3]], in: store)
        await store.close()
    }

    @Test(
        "two collectors on one PostgreSQL database, batches alternating and raced: each log's order holds",
        .enabled(if: PostgresFixture.isAvailable)
    )
    func twoReplicasKeepEachLogsOrder() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        let first = try await directory.openStore()
        let second = try await directory.openStore()
        let key = SigningKey.generate()
        let collectors = [Collector(store: first, receiptKey: key), Collector(store: second, receiptKey: key)]
        let chains = (0..<12).map { _ in
            var chain = CollectorChain()
            chain.appendEvents(7)
            return chain
        }
        try await Self.deliverOneByOne(chains, to: collectors, key: key.publicKey)

        // One log's consecutive entries sent to both at the same instant: whichever commits first, the head and
        // the tree take them in seq order.
        var raced = CollectorChain()
        raced.appendEvents(12)
        _ = try await collectors[0].ingest(raced.batch([0]))
        for pair in stride(from: 1, to: 12, by: 2) {
            async let left = collectors[0].ingest(raced.batch([pair]))
            async let right = collectors[1].ingest(raced.batch([pair + 1]))
            let answers = try await [left, right]
            #expect(answers.allSatisfy { $0.results.map(\.status) == [.accepted] })
        }
        try await Self.expectTrees(chains + [raced], in: first)
        #expect(try await second.head(logId: raced.logId)?.seq == 12)
        await first.close()
        await second.close()
    }

    @Test(
        "a collector whose cached keys are stale (another replica stored a rotation) still decides by the database",
        arguments: CollectorEngine.underTest
    )
    func staleKeysAreOnlyAHint(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let first = try await directory.openStore()
        let second = try await directory.openStore()
        let key = SigningKey.generate()
        let stale = Collector(store: first, receiptKey: key)
        let other = Collector(store: second, receiptKey: key)
        var chain = CollectorChain()
        chain.appendEvents(2)
        #expect(try await stale.ingest(chain.batch()).results.allSatisfy { $0.status == .accepted })
        let fork = chain.offChain(after: chain.head(at: 1))
        chain.rotate()
        chain.appendEvents(1)
        #expect(try await other.ingest(chain.batch([3, 4])).results.allSatisfy { $0.status == .accepted })
        // Signed by the key the stale collector has not seen: checked in the transaction, with the stored keys.
        chain.appendEvents(1)
        let answer = try await stale.ingest(chain.batch([5]))
        #expect(answer.results.map(\.status) == [.accepted])
        #expect(answer.treeReceipt?.seq == 5)
        // A fork is refused as before.
        let refused = try await stale.ingest(CollectorChain.batch(logId: chain.logId, [fork]))
        #expect(refused.results.map(\.code) == [409])
        try await Self.expectTrees([chain], in: first)
        await first.close()
        await second.close()
    }
}
