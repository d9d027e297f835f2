import AuditChain
import Testing

@testable import CollectorUI

/// The witnesses page's facts and its JSON twin: what the database says each witness cosigned, and what this
/// replica saw (last cosignature, failures), absent facts as null.
@Suite struct WitnessesPageTests {
    static let time = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    @Test func theTwinSaysWhatWasCosignedAndWhatFailed() {
        let seen = WitnessesPage.Witness(
            name: "w1",
            url: "http://127.0.0.1:1",
            vkey: "w1+0+key",
            logsCosigned: 2,
            largestSize: 9,
            lastCosigned: (logId: "ab", size: 9, at: Self.time),
            failures: 1,
            lastFailure: (at: Self.time, reason: "did not answer")
        )
        let unseen = WitnessesPage.Witness(
            name: "w2",
            url: "http://127.0.0.1:2",
            vkey: "w2+0+key",
            logsCosigned: 0,
            largestSize: nil,
            lastCosigned: nil,
            failures: 0,
            lastFailure: nil
        )
        let page = WitnessesPage(witnesses: [seen, unseen], generatedAt: Self.time)
        guard case .array(let rows)? = page.json.objectValue?["witnesses"], rows.count == 2 else {
            Issue.record("two rows expected")
            return
        }
        let first = rows[0].objectValue
        #expect(first?["lastCosigned"] == .object(["logId": "ab", "size": 9, "at": .string(Self.time.rfc3339)]))
        #expect(first?["lastFailure"]?.objectValue?["reason"] == "did not answer")
        let second = rows[1].objectValue
        #expect(second?["largestSize"] == .null)
        #expect(second?["lastCosigned"] == .null)
        #expect(second?["lastFailure"] == .null)
        #expect(seen == seen)
        #expect(seen != unseen)
        #expect(page.view.rows.map(\.lastCosigned) == ["size 9 of ab at \(Self.time.rfc3339)", "none seen"])
    }

    @Test func withoutWitnessesThePageSaysHowToConfigureOne() throws {
        let html = try PageRenderer().html(WitnessesPage(witnesses: [], generatedAt: Self.time), signedIn: false)
        #expect(html.contains("No witness is configured"))
    }
}
