import AuditChain
import Testing

@testable import CollectorUI

/// What a log's page reads from entries without a data key: the header of an entry, the reason of a removal record,
/// the device id of a genesis (GenesisFacts); and its JSON twin.
@Suite struct LogPageTests {
    static let time = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    static func chain() -> (ChainSealer, SealedEntry) {
        ChainSealer.genesis(
            logId: Array(repeating: 7, count: 16),
            deviceId: "<b>device</b>",
            signingKey: .generate(),
            dataKey: .generate(),
            time: time
        )
    }

    @Test func anEntryShowsItsHeaderAndARemovalItsReason() {
        let (initial, genesis) = Self.chain()
        var sealer = initial
        let removal = sealer.seal(
            .accountedRemoval(
                SystemRecord.Removal(
                    reason: "fifo <overflow>",
                    firstSeq: 1,
                    lastSeq: 1,
                    count: 1,
                    lastRemovedHash: genesis.entryHash
                )
            ),
            time: AuditTimestamp(millisecondsSinceEpoch: Self.time.millisecondsSinceEpoch + 5)
        )
        let entry = LogPage.Entry(seq: 1, bytes: removal.serialized, entryHash: removal.entryHash)
        #expect(entry.kind == .accountedRemoval)
        #expect(entry.sealedAt?.millisecondsSinceEpoch == Self.time.millisecondsSinceEpoch + 5)
        #expect(entry.size == removal.serialized.count)
        #expect(entry.entryHash == Hex.encode(removal.entryHash))
        let record = LogPage.Removal(recordSeq: 1, firstSeq: 1, lastSeq: 1, count: 1, recordBytes: removal.serialized)
        #expect(record.reason == "fifo <overflow>")
        // A genesis is no removal record; missing bytes give no reason.
        #expect(
            LogPage.Removal(recordSeq: 0, firstSeq: 0, lastSeq: 0, count: 0, recordBytes: genesis.serialized).reason
                == nil
        )
        #expect(LogPage.Removal(recordSeq: 0, firstSeq: 0, lastSeq: 0, count: 0, recordBytes: nil).reason == nil)
    }

    @Test func theGenesisNamesTheDeviceAndNothingElseDoes() {
        let (_, genesis) = Self.chain()
        #expect(GenesisFacts.deviceId(genesis.serialized) == "<b>device</b>")
        #expect(GenesisFacts.deviceId(Array(genesis.serialized.dropLast())) == nil)
        #expect(GenesisFacts.deviceId([]) == nil)
    }

    @Test func theJSONTwinCarriesTheHeadAndTheCheckpointAsGiven() {
        let head = JSONValue.object(["seq": 3, "held": 4])
        let page = LogPage(
            logId: "ab",
            summary: FleetLog(logId: "ab", headSeq: 3),
            head: head,
            checkpoint: "origin\n4\nroot\n",
            entries: [],
            removals: [],
            incidents: [LogPage.Incident(seq: 2, kind: "fork", reason: "r", entryHash: [1])],
            generatedAt: Self.time
        )
        let json = page.json.objectValue
        #expect(json?["head"] == head)
        #expect(json?["checkpoint"] == .string("origin\n4\nroot\n"))
        #expect(json?["summary"]?.objectValue?["headSeq"] == .integer(3))
        guard case .array(let incidents)? = json?["incidents"] else {
            Issue.record("no incidents")
            return
        }
        #expect(
            incidents.first?.objectValue?["evidence"] == .string("/ui/logs/ab/evidence.bundle?seq=2&kind=fork&hash=01")
        )
    }
}
