import Testing

@testable import CollectorUI

@Suite struct LogHealthTests {
    @Test func incidentsAreRedWhateverElseHolds() {
        #expect(LogHealth.of(incidents: 1, hasHead: true, unbridgedGap: false, lag: 0) == .incident)
        #expect(LogHealth.of(incidents: 2, hasHead: false, unbridgedGap: true, lag: 9) == .incident)
        #expect(LogHealth.incident.colour == "red")
    }

    @Test func aMissingHeadAGapOrALagIsAmber() {
        #expect(LogHealth.of(incidents: 0, hasHead: false, unbridgedGap: false, lag: 0) == .behind)
        #expect(LogHealth.of(incidents: 0, hasHead: true, unbridgedGap: true, lag: 0) == .behind)
        #expect(LogHealth.of(incidents: 0, hasHead: true, unbridgedGap: false, lag: 3) == .behind)
        #expect(LogHealth.behind.colour == "amber")
    }

    @Test func aCoveredLogIsGreenAndSortsLast() {
        #expect(LogHealth.of(incidents: 0, hasHead: true, unbridgedGap: false, lag: 0) == .healthy)
        #expect(LogHealth.allCases.sorted() == [.incident, .behind, .healthy])
    }
}
