import AuditChain
import Crypto

extension VectorChainV2 {
    /// How a case is verified besides its entries: the pinned key, whether the detached checkpoint is trusted, and the
    /// time of verification (section 13.4 rule 6) when there is one.
    static func how(pinned: [UInt8], checkpoint: Bool = false, referenceTime: Int64? = nil) -> [String: JSONValue] {
        var members: [String: JSONValue] = [
            "pinnedPublicKey": VectorChain.hex(pinned), "checkpoint": .bool(checkpoint),
        ]
        if let referenceTime { members["referenceTime"] = .integer(referenceTime) }
        return members
    }

    /// The tampered copies of the main chain (``build()``), each with the findings a verifier must give.
    static func tamperedCases(_ chain: EpochChainFixture) -> [JSONValue] {
        let original = chain.serialized
        let genesisKey = Array(EpochChainFixture.key(0).publicKey.rawRepresentation)
        let pin = how(pinned: genesisKey)
        func flip(_ entry: Int, _ byte: Int, _ mask: UInt8 = 0x01) -> [[UInt8]] {
            var copy = original
            copy[entry][byte] ^= mask
            return copy
        }
        var cases: [JSONValue] = [
            VectorChain.caseJSON(
                "the time field of seq 3, unsigned, inside the commit 1-4, altered",
                flip(3, 39),
                [(1, "unsealed"), (2, "unsealed"), (3, "headerModified")],
                extra: pin
            ),
            VectorChain.caseJSON(
                "one payload byte of seq 8, unsigned, inside the commit 7-11, flipped",
                flip(8, SealedEntry.unsignedOverhead + 5, 0x80),
                [(8, "payloadModified")],
                extra: pin
            ),
            VectorChain.caseJSON(
                "the copy ends at seq 8: the signature of the commit 7-11 (at 9) is cut, an unsealed tail",
                Array(original[0...8]),
                [(7, "unsealed"), (8, "unsealed")],
                extra: pin
            ),
        ]
        // The signature of seq 4 stripped and its flag cleared: its hash changes, seq 5 no longer links to it.
        var stripped = original
        var last = chain.entries[4]
        last.header.flags = 0
        last.signature = []
        stripped[4] = last.serialized
        cases.append(
            VectorChain.caseJSON(
                "the signature of seq 4 (the last of the commit 1-4) removed and its signed flag cleared",
                stripped,
                [(1, "unsealed"), (2, "unsealed"), (3, "unsealed"), (4, "headerModified")],
                extra: pin
            )
        )
        // A thief holding epoch 3's key cuts the log after seq 4 and rewrites seq 5 (epoch 0) signed by that key: no
        // key the chain introduces there signs it (section 13.5). The copy ends at the forged entry, so the finding
        // does not depend on where a record introducing the key lies.
        let thief = EpochChainFixture.key(3)
        let resigned = chain.entries[5].forged(by: thief) { header, _, _ in header.signingKeyId = thief.id }
        cases.append(
            VectorChain.caseJSON(
                "the copy cut after seq 4, then seq 5 (epoch 0) re-signed by epoch 3's key",
                Array(original[0...4]) + [resigned.serialized],
                [(5, "unknownKey")],
                extra: pin
            )
        )
        // Epoch 0's key signing seq 7, after the epoch record (seq 6) that retired it.
        let retired = chain.entries[7].forged(by: EpochChainFixture.key(0)) { header, _, _ in
            header.signingKeyId = EpochChainFixture.key(0).id
            header.flags = FormatConstants.signedFlag
        }
        cases.append(
            VectorChain.caseJSON(
                "seqs 0-6, then seq 7 signed by epoch 0's key, which the epoch record at seq 6 retired",
                Array(original[0...6]) + [retired.serialized],
                [(7, "unknownKey")],
                extra: pin
            )
        )
        var skipped = EpochChainFixture()
        skipped.commit(2)
        skipped.endEpoch(number: 2)
        skipped.commit(2)
        cases.append(
            VectorChain.caseJSON(
                "another chain of the same keys whose first epoch record (seq 3) states epoch 2: a number skipped",
                skipped.serialized,
                [(3, "epochInvalid")],
                extra: pin
            )
        )
        var back = EpochChainFixture()
        back.commit(2)
        back.endEpoch(after: -120_000)
        back.commit(1)
        cases.append(
            VectorChain.caseJSON(
                "another chain whose epoch record (seq 3) is dated 2 minutes before the entries of the epoch it ends",
                back.serialized,
                [(3, "epochInvalid")],
                extra: pin
            )
        )
        // A writer whose clock stepped back and that does not seal at the later of its clock and the epoch's
        // beginning (as the reference writer does): seq 2 is dated 61 s before epoch 1 (begun at seq 1) began.
        var early = EpochChainFixture()
        early.endEpoch()
        early.sealer.earliestTime = nil
        early.clock = AuditTimestamp(millisecondsSinceEpoch: early.clock.millisecondsSinceEpoch - 62_000)
        early.commit(1)
        cases.append(
            VectorChain.caseJSON(
                "another chain whose seq 2 is dated 61 s before its epoch (begun at seq 1) began, beyond the skew",
                early.serialized,
                [(2, "epochInvalid")],
                extra: pin
            )
        )
        let fork = chain.entries[15].forged(by: EpochChainFixture.key(3)) { header, _, _ in
            header.time = AuditTimestamp(millisecondsSinceEpoch: header.time.millisecondsSinceEpoch + 5)
        }
        cases.append(
            VectorChain.caseJSON(
                "seqs 0-15, then a second seq 15 (its time 5 ms later) signed by the same key, epoch 3's",
                Array(original[0...15]) + [fork.serialized],
                [(15, "equivocation")],
                extra: pin
            )
        )
        // The copy stops at seq 15, inside epoch 3 (begun at seq 13's time), without a close record.
        let began = chain.entries[13].header.time.millisecondsSinceEpoch
        let twoEpochs = Int64(EpochChainFixture.epochSeconds) * 2000
        cases.append(
            VectorChain.caseJSON(
                "the copy ends at seq 15, not closed, verified more than two epoch lengths after epoch 3 began",
                Array(original[0...15]),
                [(16, "openEnd")],
                extra: how(pinned: genesisKey, referenceTime: began + twoEpochs + 1)
            )
        )
        cases.append(
            VectorChain.caseJSON(
                "the copy ends at seq 15, not closed, verified exactly two epoch lengths after epoch 3 began",
                Array(original[0...15]),
                [],
                extra: how(pinned: genesisKey, referenceTime: began + twoEpochs)
            )
        )
        cases.append(
            VectorChain.caseJSON(
                "the whole chain, closed, verified a year later: no openEnd",
                original,
                [],
                extra: how(pinned: genesisKey, referenceTime: began + 31_536_000_000)
            )
        )
        cases.append(
            VectorChain.caseJSON(
                "the copy ends at seq 18, signed and authentic; the trusted checkpoint reaches seq 21",
                Array(original[0...18]),
                [(19, "truncated")],
                extra: how(pinned: genesisKey, checkpoint: true)
            )
        )
        return cases
    }

    /// The migrated log (``buildMigrated()``) clean, and with a version 1 entry after its version 2 part.
    static func migratedCases(
        _ migrated: (entries: [SealedEntry], afterCommit: ChainSealer, clock: ChainFixture)
    ) -> [JSONValue] {
        let pinned = how(pinned: Array(migrated.clock.signingKey.publicKey.rawRepresentation))
        var clock = migrated.clock
        var backwards = ChainSealer(
            head: migrated.afterCommit.head,
            signingKey: migrated.afterCommit.signingKey,
            dataKey: migrated.afterCommit.dataKey,
            formatVersion: FormatConstants.version
        )
        let v1Entry = try! backwards.seal(ChainFixture.event(7), time: clock.tick(), nonce: ChainFixture.nonce(7))
        return [
            VectorChain.caseJSON(
                "the migrated log as written: version 1 entries, the upgrade record, version 2 entries, a close",
                migrated.entries.map(\.serialized),
                [],
                extra: pinned
            ),
            VectorChain.caseJSON(
                "the migrated log up to seq 6, then a version 1 entry (seq 7) signed by the epoch 1 key",
                migrated.entries[0...6].map(\.serialized) + [v1Entry.serialized],
                [(7, "epochInvalid")],
                extra: pinned
            ),
        ]
    }
}
