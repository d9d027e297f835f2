import AuditChain
import AuditCollector
import AuditWire
import Crypto
import Testing
import TestKit

/// The collector's ingest rules, over real HTTP on loopback.
@Suite struct CollectorIngestTests {
    @Test(
        "a version 1 batch (an agent from before the tree) gets version 1's JSON receipt for the head",
        arguments: CollectorEngine.underTest
    )
    func acceptsChainFromGenesisAndSignsTheHead(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(9)
        try await withCollector(directory) { client, collector in
            var old = chain.batch()
            old.version = SyncWire.version
            old.treeSize = nil
            let reply = try await client.post(old)
            #expect(reply.json?.objectValue?["v"] == .integer(1))
            #expect(reply.status == 200)
            let response = try #require(reply.response)
            #expect(response.results.count == 10)
            #expect(response.results.allSatisfy { $0.status == .accepted && $0.code == 200 })
            let receipt = try #require(response.receipt)
            #expect(receipt.logId == chain.logId)
            #expect(receipt.seq == 9)
            #expect(receipt.entryHash == chain.entries[9].entryHash)
            let key = try await client.collectorKey()
            #expect(receipt.isSigned(by: key))
            #expect(!receipt.isSigned(by: SigningKey.generate().publicKey))

            let head = try await client.head(chain.logId)
            #expect(head.status == 200)
            let members = try #require(head.json?.objectValue)
            #expect(members["seq"] == .integer(9))
            #expect(members["entryHash"] == .string(Hex.encode(chain.entries[9].entryHash)))
            #expect(members["highestSeq"] == .integer(9))
            #expect(members["held"] == .integer(10))
            #expect(members["gaps"] == .array([]))
            #expect(members["forks"] == .array([]))
            let headReceipt = try CollectorReceipt(json: try #require(members["receipt"]))
            #expect(headReceipt.isSigned(by: key) && headReceipt.seq == 9)

            let stored = try await collector.store.entries(logId: chain.logId)
            #expect(stored.map(\.bytes) == chain.entries.map(\.serialized))
            #expect(try await client.head(CollectorChain().logId).status == 404)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func sameBatchTwiceIsAllDuplicateAndStoredOnce(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(4)
        try await withCollector(directory) { client, collector in
            #expect(try await client.post(chain.batch()).status == 200)
            var other = chain.batch()
            other.batchId = "a-different-batch-id"
            let again = try #require(try await client.post(other).response)
            #expect(again.results.allSatisfy { $0.status == .duplicate && $0.code == 200 })
            #expect(again.treeReceipt?.seq == 4)
            // The very same batch id: the stored results again, nothing stored twice.
            let replay = try #require(try await client.post(chain.batch()).response)
            #expect(replay.results.count == 5)
            #expect(replay.results.allSatisfy { $0.code == 200 })
            #expect(try await collector.store.count(logId: chain.logId) == 5)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func forkIsRefusedAndReported(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(3)
        let fork = chain.offChain(after: chain.head(at: 1))
        try await withCollector(directory) { client, collector in
            #expect(try await client.post(chain.batch()).status == 200)
            let reply = try #require(try await client.post(CollectorChain.batch(logId: chain.logId, [fork])).response)
            #expect(reply.summary == ["2:rejected:409"])
            #expect(reply.results[0].reason.contains("fork"))
            #expect(!reply.results[0].isRetryable)
            let forks = try await collector.store.forks(logId: chain.logId)
            #expect(forks.map(\.seq) == [2])
            #expect(forks.first?.bytes == fork.serialized)
            let head = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(head["forks"] == .array([.integer(2)]))
            #expect(head["seq"] == .integer(3))
            #expect(try await collector.store.entries(logId: chain.logId)[2].bytes == chain.entries[2].serialized)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func badSignatureAndWrongKeyAreRejected422(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(3)
        var flipped = chain.entries[1].serialized
        flipped[flipped.count - 1] ^= 0x01
        var wrongKey = chain.entries[2]
        let impostor = SigningKey.generate()
        wrongKey.signature = Array(
            try impostor.privateKey.signature(for: SealedEntry.signedMessage(entryHash: wrongKey.entryHash))
        )
        var payload = chain.entries[3].serialized
        payload[FormatConstants.headerSize + 32 + 12] ^= 0x80
        try await withCollector(directory) { client, collector in
            #expect(try await client.post(chain.batch([0])).status == 200)
            let batch = SyncBatch(
                logId: chain.logId,
                batchId: "tampered",
                entries: [
                    SyncEntry(seq: 1, bytes: flipped), SyncEntry(seq: 2, bytes: wrongKey.serialized),
                    SyncEntry(seq: 3, bytes: payload), SyncEntry(seq: 4, bytes: [1, 2, 3]),
                ],
                checkpoint: nil
            )
            let reply = try #require(try await client.post(batch).response)
            #expect(reply.summary == ["1:rejected:422", "2:rejected:422", "3:rejected:422", "4:rejected:400"])
            #expect(reply.results[0].reason.contains("signature"))
            #expect(reply.results[2].reason.contains("payloadDigest"))
            #expect(reply.results[3].reason.contains("malformed"))
            #expect(try await collector.store.count(logId: chain.logId) == 1)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func entryThatDoesNotLinkIsAChainBreak(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(3)
        let spliced = chain.offChain(
            after: ChainHead(logId: chain.logId, seq: 1, hash: [UInt8](repeating: 7, count: 32))
        )
        try await withCollector(directory) { client, collector in
            #expect(try await client.post(chain.batch([0, 1, 3])).status == 200)
            let reply = try #require(
                try await client.post(CollectorChain.batch(logId: chain.logId, [spliced])).response
            )
            #expect(reply.summary == ["2:rejected:409"])
            #expect(reply.results[0].reason.contains("chain break"))
            #expect(try await collector.store.chainBreaks(logId: chain.logId).map(\.seq) == [2])
            let head = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(head["chainBreaks"] == .array([.integer(2)]))
            #expect(head["seq"] == .integer(1))
            // The true entry 2 still links both ways and closes the gap.
            let fixed = try #require(try await client.post(chain.batch([2])).response)
            #expect(fixed.summary == ["2:accepted:200"])
            #expect(fixed.treeReceipt?.seq == 3)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func unknownKeyIsRetryable503UntilTheRotationArrives(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(2)
        chain.rotate()
        chain.appendEvents(2)
        try await withCollector(directory) { client, _ in
            #expect(try await client.post(chain.batch([0, 1, 2])).status == 200)
            let early = try #require(try await client.post(chain.batch([4, 5])).response)
            #expect(early.summary == ["4:rejected:503", "5:rejected:503"])
            #expect(early.results.filter(\.isRetryable).count == 2)
            #expect(early.results[0].reason.contains("unknown signing key"))
            #expect(early.treeReceipt?.seq == 2)
            let rotation = try #require(try await client.post(chain.batch([3])).response)
            #expect(rotation.summary == ["3:accepted:200"])
            // The same batch again (same batch id): processed anew because it held retryable rejections.
            let retried = try #require(try await client.post(chain.batch([4, 5])).response)
            #expect(retried.summary == ["4:accepted:200", "5:accepted:200"])
            #expect(retried.treeReceipt?.seq == 5)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func keyRotationInOneBatchAndRetiredKeyRefused(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        let firstKey = chain.signingKey
        chain.appendEvents(1)
        chain.rotate()
        chain.appendEvents(2)
        let byRetiredKey = chain.offChain(after: chain.head(at: 3), key: firstKey)
        try await withCollector(directory) { client, _ in
            let reply = try #require(try await client.post(chain.batch()).response)
            #expect(reply.results.allSatisfy { $0.status == .accepted })
            #expect(reply.treeReceipt?.seq == 4)
            let late = try #require(
                try await client.post(CollectorChain.batch(logId: chain.logId, [byRetiredKey])).response
            )
            #expect(late.summary == ["4:rejected:422"])
            #expect(late.results[0].reason.contains("retired"))
        }
    }
}
