import AuditChain
import AuditCollector
import CollectorUI
import Testing
import TestKit

/// The queries of the pages (CollectorStore+Pages.swift) on both engines: the fleet's facts in aggregate queries,
/// device ids from the genesis entries, the lists of one log, and an incident's evidence.
@Suite struct CollectorPagesQueryTests {
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
