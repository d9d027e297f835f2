import AuditChain
import Testing

/// Where the verifier places what it cannot authenticate, and where a copy ends (docs/FORMAT.md, section 10 steps 1,
/// 3 and 6): a damaged entry holds its position, so entries missing before it are still reported, and a copy that
/// ends before the seq it announces is truncated from its last position on, never in an inverted range.
@Suite("ChainVerifier positions")
struct ChainVerifierPositionTests {
    static func chain() -> ChainFixture {
        var chain = ChainFixture()
        chain.appendEvents(9)
        return chain
    }

    @Test("an entry removed and the next one malformed: both are reported")
    func removedThenMalformed() {
        let chain = Self.chain()
        var bytes = chain.serialized
        var seqs = Array(0..<UInt64(bytes.count))
        bytes.remove(at: 5)
        seqs.remove(at: 5)
        bytes[5] = Array(bytes[5].prefix(10))
        let report = ChainFixture.verify(bytes, options: chain.options(), storageSeqs: seqs)
        #expect(report.findings == ["5:missing", "6:malformed"])
    }

    @Test("an entry removed and the next one's header altered: both are reported")
    func removedThenHeaderModified() {
        let chain = Self.chain()
        var bytes = chain.serialized
        var seqs = Array(0..<UInt64(bytes.count))
        bytes.remove(at: 5)
        seqs.remove(at: 5)
        // A byte of the time field: the header still says seq 6, its signature fails and 7 does not link to it.
        bytes[5][33] ^= 0x01
        let report = ChainFixture.verify(bytes, options: chain.options(), storageSeqs: seqs)
        #expect(report.findings == ["5:missing", "6:headerModified"])
    }

    @Test("an entry removed and the next one's signature altered: missing, and the gap keeps the bridge hash")
    func removedThenSignatureInvalid() {
        var chain = ChainFixture()
        chain.appendEvents(4)
        let removed = chain.entries[4]
        chain.append(
            .accountedRemoval(
                .init(reason: "fifo", firstSeq: 4, lastSeq: 4, count: 1, lastRemovedHash: removed.entryHash)
            )
        )
        chain.appendEvents(2)
        var bytes = chain.serialized
        var seqs = Array(0..<UInt64(bytes.count))
        // The removal record's seq is 5: drop the entry it accounts for, and alter the record's signature only.
        bytes.remove(at: 4)
        seqs.remove(at: 4)
        bytes[4][bytes[4].count - 1] ^= 0x01
        let report = ChainFixture.verify(bytes, options: chain.options(), storageSeqs: seqs)
        // The record is not authentic, so it cannot account for seq 4; the gap is still reported.
        #expect(report.findings == ["4:missing", "5:signatureInvalid"])
    }

    @Test("a last line that is damaged is malformed, not also truncated")
    func damagedLastLine() {
        let chain = Self.chain()
        var options = chain.options()
        options.announcedLastSeq = 9
        var verifier = ChainVerifier(options: options)
        for (seq, bytes) in chain.serialized.enumerated().dropLast() {
            verifier.consume(bytes, storageSeq: UInt64(seq))
        }
        verifier.consumeUnreadable("bundle line 11 is not an entry line")
        let report = verifier.finish()
        #expect(report.findings == ["9:malformed"])
        #expect(report.problems.first?.detail == "bundle line 11 is not an entry line")
    }

    @Test("a copy that ends before the seq it announces is truncated from its last position + 1")
    func announcedEnd() {
        let chain = Self.chain()
        var options = chain.options()
        options.announcedLastSeq = 9
        let report = ChainFixture.verify(Array(chain.serialized.prefix(6)), options: options)
        #expect(report.findings == ["6:truncated"])
        #expect(report.problems.first?.lastSeq == 9)
        // Whole: nothing.
        #expect(ChainFixture.verify(chain.serialized, options: options).isClean)
    }

    @Test("a range copy cut to its genesis is truncated from firstSeq, never in an inverted range")
    func cutRange() {
        let chain = Self.chain()
        var options = chain.options()
        options.firstSeq = 5
        options.announcedLastSeq = 9
        let report = ChainFixture.verify([chain.serialized[0]], options: options)
        #expect(report.findings == ["5:truncated"])
        #expect(report.problems.first?.lastSeq == 9)
        // A trusted checkpoint before the range says nothing about it; none is reported inverted.
        options.trustedCheckpoint = SignedCheckpoint(
            head: ChainHead(logId: ChainFixture.logId, seq: 4, hash: chain.entries[4].entryHash),
            signingKey: chain.signingKey
        )
        let withCheckpoint = ChainFixture.verify([chain.serialized[0]], options: options)
        #expect(withCheckpoint.problems.allSatisfy { $0.seq <= $0.lastSeq })
        #expect(withCheckpoint.findings == ["5:truncated"])
    }
}
