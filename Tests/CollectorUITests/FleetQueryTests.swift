import Testing

@testable import CollectorUI

/// The fleet page's query: parsed leniently from the query string, rendered back into links.
@Suite struct FleetQueryTests {
    @Test func malformedParametersKeepTheDefaults() {
        let query = FleetQuery(parameters: [
            ("state", "<b>"), ("sort", "drop table"), ("page", "-3"), ("per", "100000"), ("order", "sideways"),
        ])
        #expect(query == FleetQuery())
        #expect(query.path == "/ui/fleet")
    }

    @Test func aQueryRendersBackOnlyWhatDiffersFromTheDefault() {
        let query = FleetQuery(parameters: [("state", "incident"), ("sort", "lag"), ("order", "desc"), ("page", "2")])
        #expect(query.path == "/ui/fleet?state=incident&sort=lag&order=desc&page=2")
        #expect(FleetQuery(parameters: [("sort", "lag"), ("sort", "log")]).sort == .lag)
    }
}
