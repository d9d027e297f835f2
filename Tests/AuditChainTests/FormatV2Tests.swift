import AuditChain
import Crypto
import Testing

/// Format version 2 (docs/FORMAT.md, section 13): epochs, one signature per commit, the rules a verifier holding only
/// the genesis key applies.
@Suite("Format version 2")
struct FormatV2Tests {
    /// Genesis, a commit of 5, an epoch end, a commit of 3, a commit of 1, an epoch end, a commit of 4, a close.
    static func sampleChain() -> EpochChainFixture {
        var chain = EpochChainFixture()
        chain.commit(5)
        chain.endEpoch()
        chain.commit(3)
        chain.commit(1)
        chain.endEpoch()
        chain.commit(4)
        chain.append(.close(.init(reason: "stopped")))
        return chain
    }

    @Test("a clean chain: one signature per commit, the epochs counted, closed; full and fast agree")
    func cleanChain() {
        let chain = Self.sampleChain()
        let signed = chain.entries.filter(\.header.carriesSignature)
        // genesis, 4 commits, 2 epoch records, the close record
        #expect(signed.count == 8)
        for entry in chain.entries {
            #expect(entry.header.version == 2)
            #expect(entry.serializedCount == (entry.header.carriesSignature ? 216 : 152) + entry.payload.count)
            #expect((try? SealedEntry(serialized: entry.serialized)) == entry)
        }
        for fast in [false, true] {
            let report = ChainFixture.verify(chain.serialized, options: chain.options(fast: fast))
            #expect(report.isClean, "fast \(fast): \(report.problems)")
            #expect(report.signaturesChecked == 8)
            #expect(report.formatVersion == 2 && report.epochs == 3 && report.closed && report.unsealedTail == 0)
            #expect(report.lastEpochTime == chain.entries[11].header.time)
            #expect(report.head?.hash == chain.sealer.head.hash)
        }
    }

    @Test("a long commit signs every signEvery entries, so that no run exceeds it")
    func longCommitSignsEveryN() {
        var chain = EpochChainFixture(signEvery: 4)
        chain.commit(10)
        let flags = chain.entries.dropFirst().map(\.header.carriesSignature)
        #expect(flags == [false, false, false, true, false, false, false, true, false, true])
        #expect(ChainFixture.verify(chain.serialized, options: chain.options()).isClean)
    }

    @Test("an altered header inside a commit is named exactly; the entries before it in the commit are unsealed")
    func headerAlteredInsideACommit() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        // seq 3 of the first commit (seqs 1-5): a byte of its sealing time.
        bytes[3][39] ^= 0x01
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["1:unsealed", "2:unsealed", "3:headerModified"])
    }

    @Test("an altered payload of an unsigned entry is payloadModified there and nothing else")
    func payloadAltered() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes[2][160] ^= 0x80
        for fast in [false, true] {
            #expect(ChainFixture.verify(bytes, options: chain.options(fast: fast)).findings == ["2:payloadModified"])
        }
    }

    @Test("a cut signature: the commit's entries after the last signature are an unsealed tail, never OK")
    func unsealedTail() {
        var chain = EpochChainFixture()
        chain.commit(2)
        chain.commit(4)
        var bytes = chain.serialized
        bytes.removeLast()
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["3:unsealed", "4:unsealed", "5:unsealed"])
        #expect(report.unsealedTail == 3)
        // The signature bytes stripped and the flag cleared: the entry's hash changes, so it is no longer the one
        // the signature was for, and nothing covers the commit.
        var stripped = chain.serialized
        var last = chain.entries[6]
        last.header.flags = 0
        last.signature = []
        stripped[6] = last.serialized
        #expect(
            ChainFixture.verify(stripped, options: chain.options()).findings
                == ["3:unsealed", "4:unsealed", "5:unsealed", "6:unsealed"]
        )
    }

    @Test("a later epoch's key re-signing an entry of an earlier epoch is refused (CVE-2023-31439's case)")
    func laterKeyResigns() {
        let chain = Self.sampleChain()
        var entries = chain.entries
        // The thief holds epoch 2's key only: it rewrites the event at seq 2 (epoch 0) and signs it with that key.
        let thief = EpochChainFixture.key(2)
        entries[2] = entries[2].forged(by: thief) { header, _, _ in
            header.signingKeyId = thief.id
            header.flags = FormatConstants.signedFlag
        }
        let report = ChainFixture.verify(entries.map(\.serialized), options: chain.options())
        #expect(report.findings.contains("2:unknownKey") || report.findings.contains("2:headerModified"))
        #expect(!report.isClean)
        #expect(report.problems.allSatisfy { $0.seq <= 3 })
    }

    @Test("an epoch record out of number, or going back in time, is epochInvalid; the next key is still followed")
    func epochRules() {
        var skipped = EpochChainFixture()
        skipped.commit(2)
        skipped.endEpoch(number: 2)
        skipped.commit(2)
        #expect(ChainFixture.verify(skipped.serialized, options: skipped.options()).findings == ["3:epochInvalid"])

        var back = EpochChainFixture()
        back.commit(2)
        back.endEpoch(after: -120_000)
        back.commit(1)
        #expect(ChainFixture.verify(back.serialized, options: back.options()).findings == ["3:epochInvalid"])
    }

    @Test("an entry sealed before its epoch began, beyond the skew, is epochInvalid")
    func entryBeforeEpoch() {
        var chain = EpochChainFixture()
        chain.endEpoch()
        chain.commit(1)
        var entries = chain.entries
        let key = EpochChainFixture.key(1)
        entries[2] = entries[2].forged(by: key) { header, _, _ in
            header.time = AuditTimestamp(millisecondsSinceEpoch: entries[1].header.time.millisecondsSinceEpoch - 61_000)
        }
        #expect(ChainFixture.verify(entries.map(\.serialized), options: chain.options()).findings == ["2:epochInvalid"])
    }

    @Test("two different entries at one seq under one key are equivocation, with both hashes")
    func equivocation() {
        var chain = EpochChainFixture()
        chain.commit(1)
        var other = chain
        chain.commit(1)
        let fork = other.commit(1)[0].forged(by: EpochChainFixture.key(0)) { header, _, _ in
            header.time = AuditTimestamp(millisecondsSinceEpoch: header.time.millisecondsSinceEpoch + 5)
        }
        let bytes = chain.serialized + [fork.serialized]
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["2:equivocation"])
        #expect(report.problems.first?.detail.contains(Hex.encode(fork.entryHash)) == true)
    }

    @Test("the end is stated: open and stale is openEnd, recent or closed is not")
    func openEnd() {
        var chain = EpochChainFixture()
        chain.commit(2)
        chain.endEpoch()
        let began = chain.entries[3].header.time.millisecondsSinceEpoch
        let soon = AuditTimestamp(millisecondsSinceEpoch: began + 1_199_000)
        let late = AuditTimestamp(millisecondsSinceEpoch: began + 1_201_000)
        #expect(ChainFixture.verify(chain.serialized, options: chain.options(now: soon)).isClean)
        let stale = ChainFixture.verify(chain.serialized, options: chain.options(now: late))
        #expect(stale.findings == ["4:openEnd"])
        chain.append(.close(.init(reason: "stopped")))
        let closed = ChainFixture.verify(chain.serialized, options: chain.options(now: late))
        #expect(closed.isClean && closed.closed)
    }

    @Test("a version 1 log moves on by an upgrade record; a version 1 entry after it is epochInvalid")
    func upgrade() {
        var v1 = ChainFixture()
        v1.appendEvents(3)
        var sealer = v1.sealer
        let next = EpochChainFixture.key(1)
        let record = SystemRecord.Epoch(
            epoch: 1,
            newSigningPublicKey: Array(next.publicKey.rawRepresentation),
            newDataKeyId: v1.dataKey.id,
            epochSeconds: 600,
            reason: "upgrade"
        )
        var entries = v1.entries
        entries.append(sealer.endEpoch(record, signingKey: next, dataKey: v1.dataKey, time: v1.tick()))
        entries += try! sealer.seal([(ChainFixture.event(9), ChainFixture.nonce(5))], time: v1.tick(), parallelism: 1)
        let report = ChainFixture.verify(entries.map(\.serialized), options: v1.options())
        #expect(report.isClean, "\(report.problems)")
        #expect(report.formatVersion == 2 && report.epochs == 2)

        var backwards = ChainSealer(head: sealer.head, signingKey: next, dataKey: v1.dataKey)
        entries.append(try! backwards.seal(ChainFixture.event(10), time: v1.tick(), nonce: ChainFixture.nonce(6)))
        #expect(ChainFixture.verify(entries.map(\.serialized), options: v1.options()).findings == ["6:epochInvalid"])
    }

    @Test("layout: flags and kinds that version 2 does not define, and a length that does not fit the flag")
    func layout() {
        let chain = Self.sampleChain()
        let unsigned = chain.serialized[1]
        // Bit 1 (0x0002) is the subject flag of section 13.9; bit 2 is undefined.
        var otherFlag = unsigned
        otherFlag[7] = 0x04
        var rotationInV2 = chain.serialized[0]
        rotationInV2[5] = RecordKind.keyRotation.rawValue
        var flagWithoutSignature = unsigned
        flagWithoutSignature[7] = 0x01
        var v1WithFlag = ChainFixture().serialized[0]
        v1WithFlag[7] = 0x01
        var epochInV1 = ChainFixture().serialized[0]
        epochInV1[5] = RecordKind.epoch.rawValue
        for bytes in [otherFlag, rotationInV2, flagWithoutSignature, v1WithFlag, epochInV1] {
            #expect(throws: AuditChainError.self) { try SealedEntry(serialized: bytes) }
            #expect(SealedEntry.kindIfWellFormed(bytes) == nil)
        }
        #expect(!SealedEntry.carriesSignature(serialized: unsigned))
        #expect(SealedEntry.carriesSignature(serialized: chain.serialized[5]))
    }
}
