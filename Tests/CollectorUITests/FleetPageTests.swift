import AuditChain
import Testing

@testable import CollectorUI

@Suite struct FleetPageTests {
    static let now = AuditTimestamp(millisecondsSinceEpoch: 1_700_000_000_000)

    static func log(
        _ index: Int,
        head: UInt64? = 5,
        highest: UInt64? = 5,
        forks: UInt64 = 0,
        announced: UInt64? = nil
    )
        -> FleetLog
    {
        FleetLog(
            logId: String(repeating: "0", count: 30) + Hex.encode([UInt8(index)]),
            headSeq: head,
            treeSize: head.map { $0 + 1 } ?? 0,
            held: 6,
            highestSeq: highest,
            lastIngest: AuditTimestamp(millisecondsSinceEpoch: 1_700_000_000_000 - Int64(index) * 1000),
            deviceCheckpointSeq: announced,
            deviceCheckpointAt: announced.map { _ in now },
            forks: forks
        )
    }

    @Test func filtersByStateAndCountsEveryState() {
        let logs = [Self.log(1, forks: 2), Self.log(2), Self.log(3, highest: 8), Self.log(4)]
        var query = FleetQuery()
        query.state = .healthy
        let page = FleetPage(logs: logs, query: query, generatedAt: Self.now)
        #expect(page.rows.map(\.logId) == [logs[1].logId, logs[3].logId])
        #expect(page.total == 4)
        #expect(page.matching == 2)
        #expect(page.counts == [.incident: 1, .behind: 1, .healthy: 2])
    }

    @Test func sortsWorstFirstByDefaultAndByAnyColumnBothWays() {
        let logs = [Self.log(1), Self.log(2, forks: 1), Self.log(3, highest: 8)]
        let page = FleetPage(logs: logs, query: FleetQuery(), generatedAt: Self.now)
        #expect(page.rows.map(\.health) == [.incident, .behind, .healthy])
        let byIngest = FleetPage(
            logs: logs,
            query: FleetQuery(parameters: [("sort", "ingest"), ("order", "desc")]),
            generatedAt: Self.now
        )
        #expect(byIngest.rows.map(\.logId) == [logs[0].logId, logs[1].logId, logs[2].logId])
        let byLog = FleetPage(
            logs: logs.reversed(),
            query: FleetQuery(parameters: [("sort", "log")]),
            generatedAt: Self.now
        )
        #expect(byLog.rows.map(\.logId) == logs.map(\.logId))
    }

    @Test func paginatesAndLinksThePages() {
        let logs = (0..<25).map { Self.log($0) }
        let query = FleetQuery(parameters: [("per", "10"), ("page", "3"), ("sort", "log")])
        let page = FleetPage(logs: logs, query: query, generatedAt: Self.now)
        #expect(page.rows.count == 5)
        #expect(page.pageCount == 3)
        #expect(page.rows.first?.logId == logs[20].logId)
        #expect(page.view.previousHref == "/ui/fleet?sort=log&page=2&per=10")
        #expect(page.view.nextHref == nil)
        let beyond = FleetPage(logs: logs, query: FleetQuery(parameters: [("page", "99")]), generatedAt: Self.now)
        #expect(beyond.rows.isEmpty)
        #expect(beyond.view.empty)
    }

    @Test func theJSONTwinCarriesTheRowsFacts() throws {
        var page = FleetPage(logs: [Self.log(1, highest: 9, announced: 12)], query: FleetQuery(), generatedAt: Self.now)
        page.attachDeviceIds([Self.log(1).logId: "phone-1"])
        let json = page.json.objectValue
        #expect(json?["total"] == .integer(1))
        guard case .array(let rows)? = json?["logs"], let row = rows.first?.objectValue else {
            Issue.record("no rows")
            return
        }
        #expect(row["deviceId"] == .string("phone-1"))
        #expect(row["lag"] == .integer(7))
        #expect(row["lagSince"] == .string(Self.now.rfc3339))
        #expect(row["unbridgedGap"] == .bool(true))
        #expect(row["health"] == .string("behind"))
        #expect(row["epoch"] == .null && row["epochStale"] == .bool(false))
        #expect(UIPaths.json(page.query.path) == "/ui/fleet.json")
    }

    @Test func aVersion2LogShowsItsEpochAndWhetherItIsStale() throws {
        var page = FleetPage(logs: [Self.log(1, highest: 5, announced: 5)], query: FleetQuery(), generatedAt: Self.now)
        let state = ChainRules.EpochState(number: 3, startsAt: Self.now, epochSeconds: 600, recordSeq: 4)
        page.attachEpochs([Self.log(1).logId: (epoch: state, closed: false, stale: false)])
        var log = try #require(page.rows.first)
        #expect(log.epoch == state && log.health == .healthy)
        #expect(FleetPage.epochText(log) == "3 since \(Self.now.rfc3339)")
        log.epochStale = true
        #expect(FleetPage.epochText(log).hasSuffix(", stale: no epoch record for two epoch lengths"))
        let json = log.json.objectValue
        #expect(json?["epoch"] == .integer(3) && json?["epochStale"] == .bool(true))
        #expect(json?["epochStartedAt"] == .string(Self.now.rfc3339) && json?["epochSeconds"] == .integer(600))
        log.epochStale = false
        log.closed = true
        #expect(FleetPage.epochText(log).hasSuffix(", closed"))
        #expect(FleetPage.epochText(Self.log(2)) == "version 1")
    }
}
