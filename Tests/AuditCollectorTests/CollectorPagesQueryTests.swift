import AuditChain
import AuditCollector
import CollectorUI
import Testing
import TestKit

/// The queries of the pages (CollectorStore+Pages.swift) on both engines: the fleet's facts in aggregate queries,
/// device ids from the genesis entries, the lists of one log, and an incident's evidence.
@Suite struct CollectorPagesQueryTests {
    @Test(arguments: CollectorEngine.underTest) func aVersion2LogsEpochIsInItsFleetRow(
        engine: CollectorEngine
    )
        async throws
    {
        let directory = try CollectorTempDir(engine: engine)
        // Genesis days ago (the fixture's clock), epochs of 600 s: stale; a version 1 log beside it, with a rotation.
        var v2 = CollectorChain(deviceId: "device-v2", epochSeconds: 600)
        v2.appendEvents(2)
        var v1 = CollectorChain()
        v1.appendEvents(1)
        v1.rotate()
        v1.appendEvents(1)
        try await withCollector(directory, token: "ingest") { client, collector in
            #expect(try await client.post(v2.batch()).response?.summary.count == 3)
            #expect(try await client.post(v1.batch()).response?.summary.count == 4)
            let store = collector.store
            var row = try #require(try await store.fleet(only: v2.logId).first)
            #expect(row.epoch?.number == 0 && row.epochStale && !row.closed)
            #expect(row.json.objectValue?["epochStale"] == .bool(true))
            // The fleet reads the epochs of the rows it shows.
            let shown = try await store.epochStatuses(logIds: [Hex.encode(v2.logId), Hex.encode(v1.logId), "zz"])
            #expect(shown.count == 1 && shown[Hex.encode(v2.logId)]?.state.number == 0)
            // The next epoch begins now: fresh, healthy.
            v2.endEpoch(at: .now())
            v2.appendEvents(1)
            #expect(try await client.post(v2.batch([3, 4])).response?.summary.count == 2)
            row = try #require(try await store.fleet(only: v2.logId).first)
            #expect(row.epoch?.number == 1 && row.epoch?.recordSeq == 3 && !row.epochStale)
            #expect(row.health == .healthy)
            let old = try #require(try await store.fleet(only: v1.logId).first)
            #expect(old.epoch == nil && !old.epochStale && old.health == .healthy)
            #expect(try await store.epochStatus(logId: v1.logId) == nil)
            #expect(try await store.epochStatus(logId: v2.logId)?.state.number == 1)
        }
    }

    @Test(arguments: CollectorEngine.underTest) func theFleetsFactsAndALogsListsAreReadOnBothEngines(
        engine: CollectorEngine
    ) async throws {
        let directory = try CollectorTempDir(engine: engine)
        let fixture = UIFleetFixture()
        try await withCollector(directory, token: "ingest") { client, collector in
            try await fixture.post(to: client)
            let store = collector.store
            let fleet = Dictionary(uniqueKeysWithValues: try await store.fleet().map { ($0.logId, $0) })
            #expect(fleet.count == 3)
            let bridged = try #require(fleet[Hex.encode(fixture.bridged.logId)])
            #expect(bridged.headSeq == 5)
            // Not counted on the fleet page (a scan of every entry); the log's page counts.
            #expect(bridged.held == nil)
            #expect(bridged.highestSeq == 5)
            #expect(bridged.treeSize == 4)
            #expect(bridged.removalRecords == 1)
            #expect(bridged.lastIngest != nil)
            #expect(bridged.health == .healthy)
            let gapped = try #require(fleet[Hex.encode(fixture.gapped.logId)])
            #expect(gapped.headSeq == 2)
            #expect(gapped.highestSeq == 5)
            #expect(gapped.health == .behind)
            let forked = try #require(fleet[Hex.encode(fixture.forked.logId)])
            #expect(forked.forks == 1)
            #expect(forked.health == .incident)
            #expect(try await store.fleet(only: fixture.gapped.logId) == [gapped])

            let ids = try await store.deviceIds(fleet.keys.sorted() + ["not hex"])
            #expect(ids[Hex.encode(fixture.bridged.logId)] == UIFleetFixture.hostileDeviceId)
            #expect(ids[Hex.encode(fixture.forked.logId)] == "forked-device")
            #expect(ids.count == 3)

            let entries = try await store.latestEntries(logId: fixture.bridged.logId, limit: 2)
            #expect(entries.map(\.seq) == [5, 4])
            #expect(entries.last?.kind == .accountedRemoval)
            #expect(entries.first?.entryHash == Hex.encode(fixture.bridged.entries[5].entryHash))
            let removals = try await store.removalRecords(logId: fixture.bridged.logId, limit: 10)
            #expect(removals.map(\.recordSeq) == [4])
            #expect(removals.first?.reason == UIFleetFixture.hostileReason)
            #expect(removals.first?.count == 2)
            let incidents = try await store.incidentList(logId: fixture.forked.logId)
            #expect(incidents.map(\.seq) == [2])
            #expect(incidents.first?.kind == "fork")
            #expect(incidents.first?.entryHash == Hex.encode(fixture.fork.entryHash))

            let bundle = try await collector.evidenceBundle(
                logId: fixture.forked.logId,
                seq: 2,
                kind: "fork",
                entryHash: fixture.fork.entryHash
            )
            #expect(bundle?.filter { $0 == UInt8(ascii: "\n") }.count == 4)
            let none = try await collector.evidenceBundle(
                logId: fixture.forked.logId,
                seq: 2,
                kind: "chainBreak",
                entryHash: fixture.fork.entryHash
            )
            #expect(none == nil)
            #expect(try await store.witnessTotals().isEmpty)
        }
    }
}
