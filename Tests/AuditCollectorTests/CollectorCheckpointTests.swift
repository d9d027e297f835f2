import AuditChain
import AuditCollector
import AuditWire
import Crypto
import Testing
import TestKit

/// The device checkpoint a batch carries: kept when it is the device's and consistent, refused otherwise, and an
/// incident when a correctly signed one contradicts a held entry.
@Suite struct CollectorCheckpointTests {
    static func batch(_ chain: CollectorChain, _ seqs: ClosedRange<Int>, checkpoint: SignedCheckpoint?) -> SyncBatch {
        var batch = chain.batch(Array(seqs))
        batch.checkpoint = checkpoint
        return batch
    }

    static func checkpoint(_ chain: CollectorChain, at seq: Int, key: SigningKey? = nil) -> SignedCheckpoint {
        SignedCheckpoint(head: chain.head(at: seq), signingKey: key ?? chain.signingKey)
    }

    @Test(arguments: CollectorEngine.underTest) func aValidCheckpointIsKeptAndOnlyAHigherOneReplacesIt(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(9)
        try await withCollector(directory) { client, collector in
            // The device is at 9 and has delivered up to 5: the collector learns it is 4 entries behind.
            let first = try await collector.ingestReporting(
                Self.batch(chain, 0...5, checkpoint: Self.checkpoint(chain, at: 9))
            )
            #expect(first.checkpoint == .accepted)
            #expect(first.response.results.allSatisfy { $0.status == .accepted })
            let head = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(head["seq"] == .integer(5))
            let kept = try #require(head["deviceCheckpoint"]?.objectValue?["checkpoint"])
            #expect(try SignedCheckpoint(json: kept) == Self.checkpoint(chain, at: 9))
            #expect(head["checkpointConflicts"] == .array([]))
            // A lower checkpoint is consistent but does not replace the kept one.
            let second = try await collector.ingestReporting(
                Self.batch(chain, 6...9, checkpoint: Self.checkpoint(chain, at: 7))
            )
            #expect(second.checkpoint == .accepted)
            let status = try #require(try await collector.status(logId: chain.logId))
            #expect(status.deviceCheckpoint?.checkpoint.seq == 9)
            #expect(status.head?.seq == 9)
        }
    }

    @Test(arguments: CollectorEngine.underTest)
    func foreignForgedOrMisplacedCheckpointsAreNotKeptAndTheEntriesStillCount(engine: CollectorEngine) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(8)
        let other = CollectorChain()
        var forged = Self.checkpoint(chain, at: 3)
        forged.signature[0] ^= 1
        let cases: [(ClosedRange<Int>, SignedCheckpoint, String)] = [
            (0...2, Self.checkpoint(chain, at: 2, key: .generate()), "unknown key"),
            (3...4, forged, "signature is invalid"),
            (5...6, Self.checkpoint(other, at: 0), "another log"),
        ]
        try await withCollector(directory) { _, collector in
            for (seqs, checkpoint, reason) in cases {
                let outcome = try await collector.ingestReporting(Self.batch(chain, seqs, checkpoint: checkpoint))
                guard case .refused(let said) = outcome.checkpoint else {
                    Issue.record("\(reason): \(String(describing: outcome.checkpoint))")
                    continue
                }
                #expect(said.contains(reason))
                #expect(outcome.response.results.allSatisfy { $0.status == .accepted })
            }
            let status = try #require(try await collector.status(logId: chain.logId))
            #expect(status.deviceCheckpoint == nil)
            #expect(status.head?.seq == 6)
            #expect(status.checkpointConflicts.isEmpty)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func aSignedCheckpointNamingAnotherEntryIsRecordedAsAConflict(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        var chain = CollectorChain()
        chain.appendEvents(5)
        try await withCollector(directory) { client, collector in
            #expect(try await collector.ingestReporting(Self.batch(chain, 0...3, checkpoint: nil)).checkpoint == nil)
            // The device's own key signs a head at 2 that is not the entry the collector holds at 2.
            let other = ChainHead(logId: chain.logId, seq: 2, hash: [UInt8](repeating: 7, count: 32))
            let lie = SignedCheckpoint(head: other, signingKey: chain.signingKey)
            let outcome = try await collector.ingestReporting(Self.batch(chain, 4...5, checkpoint: lie))
            #expect(outcome.checkpoint == .conflict(heldHash: chain.entries[2].entryHash))
            #expect(outcome.response.results.allSatisfy { $0.status == .accepted })
            let head = try #require(try await client.head(chain.logId).json?.objectValue)
            #expect(head["checkpointConflicts"] == .array([.integer(2)]))
            #expect(head["deviceCheckpoint"] == .null)
        }
    }

    @Test func aKeyIsValidForCheckpointsOnlyWithinItsGrant() {
        var chain = CollectorChain()
        chain.appendEvents(12)
        let key = chain.signingKey
        let grants = [KeyID.signing(key.publicKey): KeyGrant(publicKey: key.publicKey, fromSeq: 5, untilSeq: 9)]
        func decide(_ seq: Int) -> CheckpointVerdict {
            CheckpointCheck.decide(
                Self.checkpoint(chain, at: seq),
                logId: chain.logId,
                keys: grants,
                trusted: [:],
                heldHash: nil
            )
        }
        #expect(decide(5) == .accepted && decide(9) == .accepted)
        for seq in [4, 10] {
            guard case .refused(let reason) = decide(seq) else {
                Issue.record("seq \(seq) accepted")
                continue
            }
            #expect(reason.contains("not valid at seq \(seq)"))
        }
        // A key registered with --trust is valid from seq 0.
        let trusted = CheckpointCheck.decide(
            Self.checkpoint(chain, at: 0),
            logId: chain.logId,
            keys: [:],
            trusted: [KeyID.signing(key.publicKey): key.publicKey],
            heldHash: chain.entries[0].entryHash
        )
        #expect(trusted == .accepted)
    }
}
