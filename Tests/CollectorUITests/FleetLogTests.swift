import AuditChain
import Testing

@testable import CollectorUI

/// A fleet row's derived facts: lag, unbridged gap, incidents, health.
@Suite struct FleetLogTests {
    @Test func rowsDeriveLagGapAndHealth() {
        let behind = FleetPageTests.log(1, head: 5, highest: 9, announced: 12)
        #expect(behind.lag == 7)
        #expect(behind.unbridgedGap)
        #expect(behind.health == .behind)
        let noHead = FleetPageTests.log(2, head: nil, highest: 3, announced: 3)
        #expect(noHead.lag == 4)
        #expect(noHead.health == .behind)
        #expect(FleetPageTests.log(3, forks: 1).health == .incident)
        #expect(FleetPageTests.log(4).health == .healthy)
        #expect(FleetPageTests.log(4, announced: 2).lag == 0)
    }

    @Test func incidentCountsDoNotOverflow() {
        let log = FleetLog(logId: "00", forks: .max, chainBreaks: .max, checkpointConflicts: 1)
        #expect(log.incidents > 0)
        #expect(log.health == .incident)
    }
}
