import AuditChain
import Crypto
import Testing

@Suite("ChainSealer")
struct ChainSealerTests {
    @Test("a sealed event opens with its data key and round-trips")
    func sealOpenRoundTrip() throws {
        var chain = ChainFixture()
        let entry = chain.appendEvents(1, type: "BIOMETRIC_AUTH_FAILURE")[0]
        let plaintext = try entry.openPayload(with: chain.dataKey)
        let event = try AuditEvent(canonicalPayload: plaintext)
        #expect(event == ChainFixture.event(1, type: "BIOMETRIC_AUTH_FAILURE"))
        #expect(entry.header.seq == 1)
        #expect(entry.header.prevHash == chain.entries[0].entryHash)
        #expect(entry.header.dataKeyId == chain.dataKey.id)
        #expect(entry.isSigned(by: chain.signingKey.publicKey))
        #expect(try SealedEntry(serialized: entry.serialized) == entry)
        #expect(entry.serializedCount == entry.serialized.count)
        #expect(chain.entries[0].serializedCount == chain.entries[0].serialized.count)
    }

    @Test("the wrong data key, or a header moved to another position, does not open")
    func wrongKeyOrPosition() throws {
        var chain = ChainFixture()
        let entry = chain.appendEvents(2)[1]
        #expect(throws: AuditChainError.self) { try entry.openPayload(with: DataKey.generate()) }
        var moved = entry
        moved.header.seq = 1
        #expect(throws: AuditChainError.self) { try moved.openPayload(with: chain.dataKey) }
        #expect(!entry.isSigned(by: SigningKey.generate().publicKey))
    }

    @Test("genesis binds log id, device id and the signing key")
    func genesis() throws {
        let chain = ChainFixture()
        let genesis = chain.entries[0]
        #expect(genesis.header.kind == .genesis)
        #expect(genesis.header.seq == 0)
        #expect(genesis.header.prevHash == [UInt8](repeating: 0, count: 32))
        guard case .genesis(let record) = try SystemRecord(kind: .genesis, payload: genesis.payload) else {
            Issue.record("not a genesis")
            return
        }
        #expect(record.logId == ChainFixture.logId)
        #expect(record.deviceId == "device-1")
        #expect(record.signingPublicKey == Array(chain.signingKey.publicKey.rawRepresentation))
        #expect(record.dataKeyId == chain.dataKey.id)
    }

    @Test("batch sealing with parallel signing equals one-by-one sealing")
    func batchEqualsSingle() throws {
        var one = ChainFixture()
        var batch = ChainFixture()
        let time = ChainFixture.start
        let items = (1...40).map { (event: ChainFixture.event($0), nonce: ChainFixture.nonce(UInt64($0))) }
        let singles = try items.map { try one.sealer.seal($0.event, time: time, nonce: $0.nonce) }
        let batched = try batch.sealer.seal(items, time: time, parallelism: 2)
        #expect(singles == batched)
        #expect(one.sealer.head == batch.sealer.head)
    }

    @Test(
        "streamed batch sealing hands over every entry once, in order, in consecutive chunks, equal to one-by-one sealing",
        arguments: [1, 16, 40, 257]
    )
    func streamedBatchEqualsSingle(count: Int) throws {
        var one = ChainFixture()
        var batch = ChainFixture()
        let time = ChainFixture.start
        let events = try (1...count).map { try EventCatalogue.builtIn.validated(ChainFixture.event($0)) }
        let nonces = (1...count).map { ChainFixture.nonce(UInt64($0)) }
        let singles = try zip(events, nonces).map { try one.sealer.seal($0.event, time: time, nonce: $1) }
        var delivered: [SealedEntry] = []
        var ranges: [Range<Int>] = []
        try batch.sealer.seal(events, nonces: nonces, time: time, parallelism: 3) { range, entries in
            #expect(range.count == entries.count)
            ranges.append(range)
            delivered += entries
        }
        #expect(delivered == singles)
        #expect(ranges.first?.lowerBound == 0)
        #expect(ranges.last?.upperBound == count)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(one.sealer.head == batch.sealer.head)
    }

    @Test("when storing a streamed chunk fails, the error comes back, no more chunks come and the head is unchanged")
    func streamedDeliveryFailure() throws {
        struct StoreFailed: Error {}
        var chain = ChainFixture()
        let before = chain.sealer.head
        let events = try (1...300).map { try EventCatalogue.builtIn.validated(ChainFixture.event($0)) }
        let nonces = (1...300).map { ChainFixture.nonce(UInt64($0)) }
        var calls = 0
        #expect(throws: StoreFailed.self) {
            try chain.sealer.seal(events, nonces: nonces, time: ChainFixture.start, parallelism: 2) { _, _ in
                calls += 1
                if calls == 2 { throw StoreFailed() }
            }
        }
        #expect(calls == 2)
        #expect(chain.sealer.head == before)
    }

    @Test("a bad nonce in a streamed batch stops it before any entry is handed over; the head is unchanged")
    func streamedBadNonce() throws {
        var chain = ChainFixture()
        let before = chain.sealer.head
        let events = try (1...100).map { try EventCatalogue.builtIn.validated(ChainFixture.event($0)) }
        var nonces = (1...100).map { ChainFixture.nonce(UInt64($0)) }
        nonces[70] = [1, 2, 3]
        var calls = 0
        #expect(throws: AuditChainError.self) {
            try chain.sealer.seal(events, nonces: nonces, time: ChainFixture.start, parallelism: 2) { _, _ in calls += 1
            }
        }
        // One nonce too few is refused before anything is sealed.
        #expect(throws: AuditChainError.self) {
            try chain.sealer.seal(events, nonces: Array(nonces.prefix(99)), time: ChainFixture.start, parallelism: 2) {
                _,
                _ in calls += 1
            }
        }
        #expect(calls == 0)
        #expect(chain.sealer.head == before)
    }

    @Test("bad keys and nonces are refused")
    func badInputs() {
        #expect(throws: AuditChainError.self) { try DataKey(rawRepresentation: [1, 2, 3]) }
        #expect(throws: AuditChainError.self) { try SigningKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
        var chain = ChainFixture()
        #expect(throws: AuditChainError.self) {
            try chain.sealer.seal(ChainFixture.event(1), time: ChainFixture.start, nonce: [1, 2, 3])
        }
        #expect(chain.sealer.head.seq == 0)
    }

    @Test("key ids are derived from the keys as FORMAT.md says")
    func keyIds() {
        let key = try! SigningKey(rawRepresentation: ChainFixture.signingSeed)
        var hasher = SHA256()
        hasher.update(data: Array("audit-chain/v1/signing-key-id".utf8))
        hasher.update(data: key.publicKey.rawRepresentation)
        #expect(key.id.bytes == Array(hasher.finalize().prefix(16)))
        let data = try! DataKey(rawRepresentation: ChainFixture.dataKeyBytes)
        let mac = HMAC<SHA256>.authenticationCode(for: Array("audit-chain/v1/data-key-id".utf8), using: data.key)
        #expect(data.id.bytes == Array(Array(mac).prefix(16)))
    }

    @Test("system records round-trip and refuse malformed payloads")
    func systemRecords() throws {
        let removal = SystemRecord.accountedRemoval(
            .init(reason: "fifo", firstSeq: 3, lastSeq: 9, count: 4, lastRemovedHash: Array(repeating: 1, count: 32))
        )
        #expect(try SystemRecord(kind: .accountedRemoval, payload: removal.canonicalPayload) == removal)
        let checkpoint = SystemRecord.checkpoint(.init(headSeq: 4, headHash: Array(repeating: 2, count: 32)))
        #expect(try SystemRecord(kind: .checkpoint, payload: checkpoint.canonicalPayload) == checkpoint)
        let bad = [
            #"{"count":0,"detail":"","firstSeq":1,"lastRemovedHash":"00","lastSeq":1,"reason":"x","v":1}"#,
            #"{"headHash":"0101010101010101010101010101010101010101010101010101010101010101","headSeq":4,"v":2}"#,
            #"{"headSeq":4, "headHash":"0101010101010101010101010101010101010101010101010101010101010101","v":1}"#,
        ]
        #expect(throws: AuditChainError.self) { try SystemRecord(kind: .accountedRemoval, payload: Array(bad[0].utf8)) }
        #expect(throws: AuditChainError.self) { try SystemRecord(kind: .checkpoint, payload: Array(bad[1].utf8)) }
        #expect(throws: AuditChainError.self) { try SystemRecord(kind: .checkpoint, payload: Array(bad[2].utf8)) }
    }
}
