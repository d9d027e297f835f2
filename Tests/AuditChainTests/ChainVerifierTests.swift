import AuditChain
import Crypto
import Testing

@Suite("ChainVerifier")
struct ChainVerifierTests {
    static func sampleChain() -> ChainFixture {
        var chain = ChainFixture()
        chain.appendEvents(3)
        chain.appendEvents(2, type: "BIOMETRIC_AUTH_FAILURE")
        chain.appendCheckpoint()
        chain.appendEvents(3)
        return chain
    }

    @Test("a clean chain verifies in full and fast mode, with and without the data key")
    func cleanChain() {
        let chain = Self.sampleChain()
        for fast in [false, true] {
            for withKey in [false, true] {
                let report = ChainFixture.verify(
                    chain.serialized,
                    options: chain.options(fast: fast, withDataKey: withKey)
                )
                #expect(report.isClean, "fast=\(fast) key=\(withKey): \(report.problems)")
                #expect(report.entriesChecked == chain.entries.count)
                #expect(report.head?.seq == chain.sealer.head.seq)
                #expect(report.head?.hash == chain.sealer.head.hash)
                #expect(report.payloadsOpened == (withKey ? 8 : 0))
            }
        }
    }

    @Test("fast mode checks fewer signatures than full mode on a clean chain")
    func fastModeSkipsSignatures() {
        var chain = ChainFixture()
        chain.appendEvents(50)
        chain.appendCheckpoint()
        chain.appendEvents(50)
        let full = ChainFixture.verify(chain.serialized, options: chain.options())
        let fast = ChainFixture.verify(chain.serialized, options: chain.options(fast: true))
        #expect(full.isClean && fast.isClean)
        #expect(full.signaturesChecked == chain.entries.count)
        // genesis, the checkpoint, the last entry of each segment
        #expect(fast.signaturesChecked <= 4)
    }

    @Test("a modified payload byte is reported as payloadModified at that entry")
    func payloadModified() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes[2][SealedEntry.overhead - 64 + 3] ^= 0x01
        for fast in [false, true] {
            let report = ChainFixture.verify(bytes, options: chain.options(fast: fast))
            #expect(report.findings == ["2:payloadModified"])
        }
    }

    @Test("a modified header byte is reported as headerModified at that entry")
    func headerModified() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes[4][40] ^= 0x80  // time field
        for fast in [false, true] {
            let report = ChainFixture.verify(bytes, options: chain.options(fast: fast))
            #expect(report.findings == ["4:headerModified"])
        }
    }

    @Test("an altered signature on an intact entry is reported as signatureInvalid")
    func signatureInvalid() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes[3][bytes[3].count - 1] ^= 0x01
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["3:signatureInvalid"])
    }

    @Test("a deleted entry with no removal record is reported missing")
    func deletedEntryIsMissing() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes.remove(at: 4)
        for fast in [false, true] {
            let report = ChainFixture.verify(bytes, options: chain.options(fast: fast))
            #expect(report.findings == ["4:missing"])
        }
    }

    @Test("a pruned range bridged by a retention record is accounted, not tampering")
    func prunedRangeIsAccounted() {
        var chain = Self.sampleChain()
        let lastRemoved = chain.entries[3]
        chain.append(
            .retentionPrune(
                .init(reason: "retention", firstSeq: 1, lastSeq: 3, count: 3, lastRemovedHash: lastRemoved.entryHash)
            )
        )
        chain.appendEvents(1)
        var bytes = chain.serialized
        bytes.removeSubrange(1...3)
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.isClean, "\(report.problems)")
        #expect(report.accounted.count == 1)
        #expect(report.accounted.first?.bridgedGap == true)
        #expect(report.accounted.first?.removal.count == 3)

        // The same gap one entry wider is not accounted for.
        var wider = bytes
        wider.remove(at: 1)
        let widerReport = ChainFixture.verify(wider, options: chain.options())
        #expect(widerReport.findings == ["1:missing"])
    }

    @Test("a removal record whose hash does not link does not bridge the gap")
    func removalRecordMustLink() {
        var chain = Self.sampleChain()
        chain.append(
            .retentionPrune(
                .init(
                    reason: "retention",
                    firstSeq: 1,
                    lastSeq: 3,
                    count: 3,
                    lastRemovedHash: Array(repeating: 7, count: 32)
                )
            )
        )
        var bytes = chain.serialized
        bytes.removeSubrange(1...3)
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["1:missing"])
        #expect(report.problems.first?.lastSeq == 3)
    }

    @Test("swapped entries are reported as reordered")
    func reordered() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes.swapAt(3, 4)
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["3:reordered"])
    }

    @Test("a repeated entry is reported as duplicate, a conflicting one as a fork")
    func duplicate() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes.insert(bytes[5], at: 6)
        #expect(ChainFixture.verify(bytes, options: chain.options()).findings == ["5:duplicate"])

        // A second, validly signed entry for seq 2 (a fork): same sealer state, other event.
        var fork = ChainFixture()
        fork.appendEvents(1)
        fork.appendEvents(1, type: "BIOMETRIC_AUTH_FAILURE")
        var forked = chain.serialized
        forked.insert(fork.serialized[2], at: 3)
        let report = ChainFixture.verify(forked, options: chain.options())
        #expect(report.findings == ["2:duplicate"])
        #expect(report.problems.first?.detail.contains("fork") == true)
    }

    @Test("valid entries that do not link are reported as linkBroken")
    func linkBroken() {
        let chain = Self.sampleChain()
        var other = ChainFixture()
        other.appendEvents(1, type: "BIOMETRIC_AUTH_FAILURE")
        other.appendEvents(1)
        var bytes = chain.serialized
        // Replace entry 2 with another chain's validly signed entry 2: 2 does not link to 1, 3 not to 2.
        bytes[2] = other.serialized[2]
        let report = ChainFixture.verify(bytes, options: chain.options())
        #expect(report.findings == ["2:linkBroken", "3:linkBroken"])
    }

    @Test("entries signed by an unpinned key are reported as unknownKey")
    func unknownKey() {
        let chain = Self.sampleChain()
        let stranger = SigningKey.generate()
        var options = ChainVerifier.Options(trustedKeys: [stranger.publicKey])
        let report = ChainFixture.verify(chain.serialized, options: options)
        #expect(report.problems.allSatisfy { $0.kind == .unknownKey })
        #expect(report.problems.count == chain.entries.count)

        options.fast = true
        let fast = ChainFixture.verify(chain.serialized, options: options)
        #expect(fast.problems.first?.seq == 0)
        #expect(fast.problems.first?.kind == .unknownKey)
    }

    @Test("a forged tail signed by a stranger is pinned to its first entry")
    func forgedTail() {
        var chain = Self.sampleChain()
        var forger = ChainSealer(head: chain.sealer.head, signingKey: .generate(), dataKey: chain.dataKey)
        let forged = try! forger.seal(ChainFixture.event(99), time: chain.tick(), nonce: ChainFixture.nonce(99))
        let report = ChainFixture.verify(chain.serialized + [forged.serialized], options: chain.options(fast: true))
        #expect(report.findings == ["\(forged.header.seq):unknownKey"])
        chain.entries.append(forged)
    }

    @Test("a log shorter than the trusted checkpoint is reported truncated")
    func truncated() {
        let chain = Self.sampleChain()
        var options = chain.options()
        options.trustedCheckpoint = chain.trustedCheckpoint
        #expect(ChainFixture.verify(chain.serialized, options: options).isClean)
        let cut = Array(chain.serialized.dropLast(2))
        let report = ChainFixture.verify(cut, options: options)
        #expect(report.findings == ["8:truncated"])
        #expect(report.problems.first?.lastSeq == 9)
    }

    @Test("a checkpoint that does not match the log, or is not signed by a known key, is reported")
    func checkpointMismatch() {
        let chain = Self.sampleChain()
        var options = chain.options()
        var checkpoint = chain.trustedCheckpoint
        checkpoint.entryHash[0] ^= 1
        options.trustedCheckpoint = checkpoint
        #expect(ChainFixture.verify(chain.serialized, options: options).findings == ["9:checkpointMismatch"])

        let stranger = SigningKey.generate()
        options.trustedCheckpoint = SignedCheckpoint(head: chain.sealer.head, signingKey: stranger)
        #expect(ChainFixture.verify(chain.serialized, options: options).findings == ["9:checkpointMismatch"])
    }

    @Test("with the data key, a payload that fails to open or validate is reported")
    func payloadChecksWithDataKey() throws {
        var chain = ChainFixture()
        chain.appendEvents(2)
        // An event sealed without validation: missing its required attribute.
        let bad = AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: ChainFixture.start,
            userId: "u",
            deviceId: "d",
            idempotencyKey: "k"
        )
        chain.entries.append(try chain.sealer.seal(bad, time: chain.tick(), nonce: ChainFixture.nonce(3)))
        let report = ChainFixture.verify(chain.serialized, options: chain.options(withDataKey: true))
        #expect(report.findings == ["3:payloadInvalid"])
        #expect(report.problems.first?.detail.contains("attributes.unlockDurationMs") == true)

        var wrongKey = chain.options()
        wrongKey.dataKeys = [.generate()]
        let wrong = ChainFixture.verify(chain.serialized, options: wrongKey)
        #expect(wrong.findings == ["1:payloadUndecryptable", "2:payloadUndecryptable", "3:payloadUndecryptable"])
    }

    @Test("key rotation: entries after it verify under the new key; the old key is retired")
    func keyRotation() throws {
        var chain = Self.sampleChain()
        let newKey = SigningKey.generate()
        let newData = DataKey.generate()
        let oldKey = chain.signingKey
        let oldData = chain.dataKey
        chain.entries.append(
            chain.sealer.rotateKeys(signingKey: newKey, dataKey: newData, reason: "scheduled", time: chain.tick())
        )
        chain.appendEvents(3)
        var options = chain.options(withDataKey: true)
        options.dataKeys = [oldData, newData]
        for fast in [false, true] {
            options.fast = fast
            let report = ChainFixture.verify(chain.serialized, options: options)
            #expect(report.isClean, "\(report.problems)")
            #expect(report.payloadsOpened == 11)
        }

        // An entry signed with the retired key after the rotation is refused.
        var stale = ChainSealer(head: chain.sealer.head, signingKey: oldKey, dataKey: oldData)
        let late = try stale.seal(ChainFixture.event(50), time: chain.tick(), nonce: ChainFixture.nonce(50))
        let report = ChainFixture.verify(chain.serialized + [late.serialized], options: chain.options())
        #expect(report.findings == ["\(late.header.seq):unknownKey"])
        #expect(report.problems.first?.detail.contains("retired") == true)
    }

    @Test(
        "batches analyzed while the next one is examined: rotations near a batch edge, and problems, are reported as in one batch"
    )
    func batchEdges() throws {
        // A rotation at entry 45: with batches of 32 the entries it signs for start in the batch examined while
        // its own batch is analyzed (its key is not known yet there), with batches of 45 and 46 at the edge.
        var chain = ChainFixture()
        chain.appendEvents(44)
        let newKey = SigningKey.generate()
        chain.entries.append(
            chain.sealer.rotateKeys(
                signingKey: newKey,
                dataKey: DataKey.generate(),
                reason: "scheduled",
                time: chain.tick()
            )
        )
        chain.appendEvents(60)
        chain.appendCheckpoint()
        chain.appendEvents(30)
        var stale = ChainSealer(head: chain.sealer.head, signingKey: chain.signingKey, dataKey: chain.dataKey)
        let late = try stale.seal(ChainFixture.event(99), time: chain.tick(), nonce: ChainFixture.nonce(99))
        var tampered = chain.serialized + [late.serialized]
        tampered[50][tampered[50].count - 100] ^= 0x01  // a payload byte, just after the rotation
        tampered[20][tampered[20].count - 1] ^= 0x01  // a signature byte, before it

        var options = chain.options()
        options.parallelism = 2
        options.batchSize = 4096
        let clean = ChainFixture.verify(chain.serialized, options: options)
        let reference = ChainFixture.verify(tampered, options: options)
        #expect(clean.isClean, "\(clean.problems)")
        #expect(clean.signaturesChecked == chain.entries.count)
        #expect(reference.findings == ["20:signatureInvalid", "50:payloadModified", "\(late.header.seq):unknownKey"])
        for batchSize in [32, 33, 45, 46, 64] {
            options.batchSize = batchSize
            let report = ChainFixture.verify(chain.serialized, options: options)
            #expect(report.isClean, "batches of \(batchSize): \(report.problems)")
            #expect(report.signaturesChecked == chain.entries.count, "batches of \(batchSize)")
            #expect(report.head?.hash == chain.sealer.head.hash, "batches of \(batchSize)")
            let found = ChainFixture.verify(tampered, options: options)
            #expect(found.findings == reference.findings, "batches of \(batchSize)")
            #expect(found.signaturesChecked == reference.signaturesChecked, "batches of \(batchSize)")
        }
    }

    @Test("an unparseable entry is reported malformed at its storage position, the rest still verifies")
    func malformed() {
        let chain = Self.sampleChain()
        var bytes = chain.serialized
        bytes[5] = Array(bytes[5].prefix(40))
        let report = ChainFixture.verify(bytes, options: chain.options(), storageSeqs: Array(0..<UInt64(bytes.count)))
        #expect(report.findings == ["5:malformed"])
    }

    @Test("an intact entry filed under another position is reported misfiled at its own seq, in both modes")
    func misfiled() {
        let chain = Self.sampleChain()
        let bytes = chain.serialized
        var positions = Array(0..<UInt64(bytes.count))
        positions[3] = 40
        for fast in [false, true] {
            var options = chain.options()
            options.fast = fast
            let report = ChainFixture.verify(bytes, options: options, storageSeqs: positions)
            #expect(report.findings == ["3:misfiled"], "fast \(fast)")
            #expect(report.problems.first?.detail == "the storage files this entry under seq 40")
            #expect(report.head?.hash == chain.sealer.head.hash, "the entry still counts where its header puts it")
            #expect(
                ChainFixture.verify(bytes, options: options, storageSeqs: Array(positions.indices.map(UInt64.init)))
                    .isClean
            )
        }
    }

    @Test("an empty log is reported, not declared clean")
    func emptyLog() {
        let chain = ChainFixture()
        #expect(ChainFixture.verify([], options: chain.options()).findings == ["0:missing"])
    }

    @Test("a missing genesis is reported")
    func missingGenesis() {
        let chain = Self.sampleChain()
        let report = ChainFixture.verify(Array(chain.serialized.dropFirst()), options: chain.options())
        #expect(report.findings.first == "0:missing")
    }

    @Test("an export range starting later verifies without its earlier entries")
    func exportRange() {
        let chain = Self.sampleChain()
        var options = chain.options()
        options.firstSeq = 5
        let bundle = [chain.serialized[0]] + Array(chain.serialized[5...])
        #expect(ChainFixture.verify(bundle, options: options).isClean)
    }

    @Test("fast mode localizes a problem inside a long segment to the exact entry")
    func fastModeLocalizes() {
        var chain = ChainFixture()
        chain.appendEvents(300)
        var bytes = chain.serialized
        bytes[137][60] ^= 0x04
        var options = chain.options(fast: true)
        options.anchorInterval = 100
        let report = ChainFixture.verify(bytes, options: options)
        #expect(report.findings == ["137:headerModified"])
        #expect(report.signaturesChecked < 300)
    }
}
