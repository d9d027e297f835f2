import AuditChain
import AuditCollector
import AuditStore
import Testing
import AuditSync
import TestKit

/// The long outage end to end: the limits act during it, and after it the real collector, over real HTTP, bridges
/// every gap with the accounted-removal records the agent sealed.
@Suite("SyncOutage", .serialized)
struct SyncOutageTests {
    @Test("a 7-hour outage with FIFO and expiry: failOpen, then every entry held or accounted, heads equal")
    func sevenHourOutage() async throws {
        var policy = DeliveryPolicy()
        policy.maxEvents = 10
        policy.maxAge = .seconds(3 * 3600)
        try await SyncFixture.run(policy: policy) { fixture in
            try fixture.proxy.set(.refuse)
            var health: DeliveryHealth?
            // Four events an hour, a cycle every 5 minutes of manual time, the backend refusing connections.
            for _ in 0..<7 {
                try await fixture.append(4)
                for _ in 0..<12 {
                    fixture.clocks.advance(.seconds(300))
                    let report = try await fixture.engine.cycle()
                    #expect(report.delivered == 0)
                    health = report.health
                }
            }
            #expect(health == .failOpen)
            let dropped = try DeliveryStatus.read(fixture.log.storage, policy: policy).dropped
            #expect((dropped["fifo"] ?? 0) > 0 && (dropped["expired"] ?? 0) > 0, "\(dropped)")
            // Nothing was dead-lettered by the outage, and no attempt was counted against any entry.
            let during = try fixture.table
            #expect(during.count(.pending) > 0)
            #expect(during.items.values.allSatisfy { $0.state != .dlq && $0.attempts == 0 })

            try await fixture.recover()
            let info = try fixture.log.info()
            let local = try fixture.log.storage.entries(from: 0, through: info.head.seq, limit: Int(info.head.seq) + 1)
            var removed: Set<UInt64> = []
            var accounted = 0
            for stored in local {
                let entry = try SealedEntry(serialized: stored.bytes)
                guard entry.header.kind == .accountedRemoval,
                    case .accountedRemoval(let removal) = try SystemRecord(
                        kind: entry.header.kind,
                        payload: entry.payload
                    )
                else { continue }
                accounted += Int(removal.count)
                removed.formUnion(removal.firstSeq...removal.lastSeq)
            }
            #expect(accounted == dropped.values.reduce(0, +))
            // The collector holds exactly the entries that were not removed, byte for byte; the removed ones are
            // covered by the records it holds, and its head (reached over the bridged gaps) is the local head.
            let held = try await fixture.collector.store.entries(logId: info.logId)
            let expected = local.filter { !removed.contains($0.seq) }
            #expect(held.map(\.seq) == expected.map(\.seq))
            #expect(held.map(\.bytes) == expected.map(\.bytes))
            #expect(removed.count == accounted)
            #expect(try await fixture.collector.store.forks(logId: info.logId).isEmpty)
            let head = try await fixture.collector.store.head(logId: info.logId)
            #expect(head?.seq == info.head.seq && head?.hash == info.head.hash)
            #expect(try DeliveryStatus.read(fixture.log.storage).receiptSeq == info.head.seq)
        }
    }
}
