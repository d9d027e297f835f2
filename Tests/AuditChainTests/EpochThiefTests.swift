import AuditChain
import Crypto
import Testing

/// Whoever copies the state directory at T holds only the current epoch's key (docs/FORMAT.md, sections 13.4 and
/// 13.5). Each rewrite such a thief can make of the history before T is named by a verifier that pins only the
/// genesis key: the first affected seq, and (for the end) a collector's receipt or the time of verification.
@Suite("Format version 2: a thief of the state directory at T")
struct EpochThiefTests {
    /// Epoch 0 (seqs 1-4), epoch 1 (6-9), epoch 2 (11-12, the current one at T): the thief holds epoch 2's key.
    static func history() -> EpochChainFixture {
        var chain = EpochChainFixture()
        chain.commit(4)
        chain.endEpoch()
        chain.commit(4)
        chain.endEpoch()
        chain.commit(2)
        return chain
    }

    static let thief = EpochChainFixture.key(2)

    /// Re-chains `entries` from `index` on as a thief would: every later entry linked again, each commit's last
    /// entry re-signed with the only key the thief holds, and named as signed by it.
    static func rechained(_ entries: [SealedEntry], from index: Int) -> [SealedEntry] {
        var out = entries
        for at in index..<out.count {
            let previous = out[at - 1].entryHash
            out[at] = out[at].forged(by: thief) { header, _, _ in
                header.prevHash = previous
                header.signingKeyId = thief.id
                header.flags = FormatConstants.signedFlag
            }
        }
        return out
    }

    static func verify(
        _ entries: [SealedEntry],
        checkpoint: SignedCheckpoint? = nil,
        now: AuditTimestamp? = nil
    ) -> VerificationReport {
        var options = EpochChainFixture().options(now: now)
        options.trustedCheckpoint = checkpoint
        return ChainFixture.verify(entries.map(\.serialized), options: options)
    }

    @Test("(a) an entry of an earlier epoch changed, deleted, inserted or reordered, everything after re-signed")
    func rewriteEarlierEpoch() {
        let chain = Self.history()
        #expect(Self.verify(chain.entries).isClean)
        // Changed: the event at seq 2 gets another time; everything after is re-chained and re-signed.
        var changed = chain.entries
        changed[2] = changed[2].forged(by: Self.thief) { header, _, _ in
            header.time = AuditTimestamp(millisecondsSinceEpoch: header.time.millisecondsSinceEpoch + 1)
            header.signingKeyId = Self.thief.id
            header.flags = FormatConstants.signedFlag
        }
        // The changed entry is named; the entry before it in its commit lost the signature that covered it.
        let changedReport = Self.verify(Self.rechained(changed, from: 3))
        #expect(changedReport.findings.prefix(2) == ["1:unsealed", "2:unknownKey"], "\(changedReport.findings)")
        // Deleted: seq 3 dropped, the rest renumbered and re-signed.
        var deleted = Array(chain.entries[0...2]) + chain.entries[4...]
        for at in 3..<deleted.count {
            deleted[at] = deleted[at].forged(by: Self.thief) { header, _, _ in
                header.seq -= 1
                header.flags = FormatConstants.signedFlag
            }
        }
        let deletedReport = Self.verify(Self.rechained(deleted, from: 3))
        #expect(deletedReport.findings.contains("3:unknownKey"), "\(deletedReport.findings)")
        #expect(deletedReport.problems.allSatisfy { $0.seq >= 1 })
        // Reordered: seqs 2 and 3 swapped in storage (a bundle's lines): the commit's cover is lost there.
        var reordered = chain.entries
        reordered.swapAt(2, 3)
        let reorderedReport = Self.verify(reordered)
        #expect(!reorderedReport.isClean)
        #expect((reorderedReport.problems.first?.seq ?? 99) <= 2, "\(reorderedReport.findings)")
    }

    @Test("(b) every entry from epoch 1 on re-signed with the current key: refused from the first one")
    func resignFromEarlierEpoch() {
        let chain = Self.history()
        let report = Self.verify(Self.rechained(chain.entries, from: 6))
        #expect(report.problems.first?.seq == 6, "\(report.findings)")
        #expect(report.problems.first?.kind == .unknownKey || report.problems.first?.kind == .unsealed)
    }

    @Test("(c) cut back to epoch 0 and extended again with the current key: named; against a receipt, truncated")
    func truncateAndReextend() {
        let chain = Self.history()
        // A checkpoint kept off the device (a collector's receipt): a verifier only needs a key it trusts for it.
        let receipt = SignedCheckpoint(head: chain.sealer.head, signingKey: EpochChainFixture.key(0))
        var extended = Array(chain.entries[0...4])
        var sealer = ChainSealer(
            head: ChainHead(logId: EpochChainFixture.logId, seq: 4, hash: extended[4].entryHash),
            signingKey: Self.thief,
            dataKey: chain.dataKey,
            formatVersion: FormatConstants.version2
        )
        extended += try! sealer.seal(
            [(ChainFixture.event(50), ChainFixture.nonce(5)), (ChainFixture.event(51), ChainFixture.nonce(6))],
            time: chain.entries[5].header.time,
            parallelism: 1
        )
        let report = Self.verify(extended)
        #expect(report.problems.first?.seq == 5 && report.problems.first?.kind == .unknownKey, "\(report.findings)")
        let cut = Self.verify(Array(chain.entries[0...4]), checkpoint: receipt)
        #expect(cut.findings.contains("5:truncated"), "\(cut.findings)")
    }

    @Test("(d) an idle epoch dropped: what follows its missing record is signed by a key nothing introduced")
    func dropIdleEpoch() {
        var chain = EpochChainFixture()
        chain.commit(2)
        chain.endEpoch()
        chain.endEpoch()
        chain.commit(1)
        // Seq 4, the idle epoch 1's end, removed: the key of epoch 2 is then introduced by nothing, so the entry after
        // the hole is not authentic, and its position is the first affected seq.
        var entries = chain.entries
        entries.remove(at: 4)
        let report = Self.verify(entries)
        #expect(report.findings == ["4:unknownKey"], "\(report.findings)")
    }

    @Test("(e) the tail cut after a clean close: openEnd once two epochs passed, truncated against the receipt")
    func cutAfterClose() {
        var chain = Self.history()
        chain.append(.close(.init(reason: "stopped")))
        let receipt = SignedCheckpoint(head: chain.sealer.head, signingKey: EpochChainFixture.key(0))
        let cut = Array(chain.entries.dropLast())
        let began = chain.entries[10].header.time.millisecondsSinceEpoch
        let later = AuditTimestamp(millisecondsSinceEpoch: began + 1_300_000)
        let report = Self.verify(cut, now: later)
        #expect(report.findings == ["13:openEnd"], "\(report.findings)")
        #expect(Self.verify(cut, checkpoint: receipt).findings.contains("13:truncated"))
        #expect(Self.verify(chain.entries, checkpoint: receipt, now: later).isClean)
    }
}
