import AuditChain
import Crypto
import Testing

/// The MUSTs of docs/FORMAT.md that a correctly signed entry can still break: the verifier names the entry, with
/// the right kind, in full and in fast mode.
@Suite("Format rules the verifier enforces")
struct FormatRuleTests {
    /// Genesis, 3 events, a checkpoint (seq 4), 2 events.
    static func chain() -> ChainFixture {
        var chain = ChainFixture()
        chain.appendEvents(3)
        chain.appendCheckpoint()
        chain.appendEvents(2)
        return chain
    }

    static func findings(_ chain: ChainFixture, firstSeq: UInt64 = 0) -> [[String]] {
        [false, true].map { fast in
            var options = chain.options(fast: fast)
            options.firstSeq = firstSeq
            options.anchorInterval = 2
            return ChainFixture.verify(chain.serialized, options: options).findings
        }
    }

    @Test("a system record with a non-zero nonce is payloadInvalid (FORMAT.md 5: 12 zero bytes)")
    func systemRecordNonce() {
        var chain = Self.chain()
        chain.forge(at: 4) { _, nonce, _ in nonce[11] = 1 }
        #expect(Self.findings(chain) == [["4:payloadInvalid"], ["4:payloadInvalid"]])
        var genesis = Self.chain()
        genesis.forge(at: 0) { _, nonce, _ in nonce[0] = 0x80 }
        #expect(Self.findings(genesis) == [["0:payloadInvalid"], ["0:payloadInvalid"]])
    }

    @Test("a system record with a data key id is payloadInvalid (FORMAT.md 3: the all-zero id)")
    func systemRecordDataKeyId() {
        let dataKeyId = ChainFixture().dataKey.id
        var chain = Self.chain()
        chain.forge(at: 4) { header, _, _ in header.dataKeyId = dataKeyId }
        #expect(Self.findings(chain) == [["4:payloadInvalid"], ["4:payloadInvalid"]])
        var genesis = Self.chain()
        genesis.forge(at: 0) { header, _, _ in header.dataKeyId = dataKeyId }
        #expect(Self.findings(genesis) == [["0:payloadInvalid"], ["0:payloadInvalid"]])
    }

    @Test("an event must name the active data key and hold the AES-GCM tag (FORMAT.md 3, 7, 8.3)")
    func eventDataKey() {
        var zero = Self.chain()
        zero.forge(at: 2) { header, _, _ in header.dataKeyId = .none }
        #expect(Self.findings(zero) == [["2:payloadInvalid"], ["2:payloadInvalid"]])

        var other = Self.chain()
        let stranger = DataKey.generate().id
        other.forge(at: 6) { header, _, _ in header.dataKeyId = stranger }
        #expect(Self.findings(other) == [["6:payloadInvalid"], ["6:payloadInvalid"]])

        var short = Self.chain()
        short.forge(at: 3) { _, _, payload in payload = Array(payload.prefix(15)) }
        #expect(Self.findings(short) == [["3:payloadInvalid"], ["3:payloadInvalid"]])
    }

    @Test("the data key rule follows rotations, and is not applied across a gap that may hide one")
    func eventDataKeyAcrossRotationAndGap() throws {
        var chain = Self.chain()
        let newData = DataKey.generate()
        chain.entries.append(
            chain.sealer.rotateKeys(signingKey: chain.signingKey, dataKey: newData, reason: "data", time: chain.tick())
        )
        chain.appendEvents(2)
        #expect(Self.findings(chain) == [[], []])
        // The entry after the rotation under the old data key.
        var stale = chain
        let oldData = chain.dataKey.id
        stale.forge(at: 8) { header, _, _ in header.dataKeyId = oldData }
        #expect(Self.findings(stale) == [["8:payloadInvalid"], ["8:payloadInvalid"]])
        // A range export that starts after the rotation cannot know it, and does not guess.
        var range = chain
        range.entries.removeSubrange(1...7)
        #expect(Self.findings(range, firstSeq: 8) == [[], []])
    }

    @Test("a range export whose genesis line was deleted is missing its genesis (FORMAT.md 11)")
    func rangeWithoutGenesis() {
        var chain = Self.chain()
        chain.entries.removeSubrange(0...4)
        #expect(Self.findings(chain, firstSeq: 5) == [["0:missing"], ["0:missing"]])
        var withGenesis = Self.chain()
        withGenesis.entries.removeSubrange(1...4)
        #expect(Self.findings(withGenesis, firstSeq: 5) == [[], []])
        #expect(ChainFixture.verify([], options: Self.chain().options()).findings == ["0:missing"])
    }

    @Test("a retention prune states the cumulative range from seq 1 (FORMAT.md 8.3)")
    func retentionStartsAtOne() {
        var chain = Self.chain()
        let hash = chain.entries[3].entryHash
        chain.append(
            .retentionPrune(.init(reason: "retention", firstSeq: 2, lastSeq: 3, count: 2, lastRemovedHash: hash))
        )
        #expect(Self.findings(chain) == [["7:payloadInvalid"], ["7:payloadInvalid"]])
        let payload = SystemRecord.retentionPrune(
            .init(reason: "retention", firstSeq: 1, lastSeq: 3, count: 3, lastRemovedHash: hash)
        ).canonicalPayload
        #expect(throws: Never.self) { try SystemRecord(kind: .retentionPrune, payload: payload) }
        // An accounted removal may start anywhere after the genesis.
        var removal = Self.chain()
        removal.append(
            .accountedRemoval(.init(reason: "fifo", firstSeq: 2, lastSeq: 3, count: 2, lastRemovedHash: hash))
        )
        #expect(Self.findings(removal) == [[], []])
    }
}
