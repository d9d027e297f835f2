import AuditChain
import Foundation
import Testing

@testable import CollectorUI

@Suite struct PageRendererTests {
    static let hostile = "<script>alert(\"x\")</script>&amp;'"
    static let escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;&#39;"
    static let now = AuditTimestamp(millisecondsSinceEpoch: 1_700_000_000_000)

    @Test func aHostileDeviceIdIsTextOnTheFleetPage() throws {
        var log = FleetLog(logId: String(repeating: "a", count: 32), headSeq: 1, held: 2, highestSeq: 1)
        log.deviceId = Self.hostile
        let html = try PageRenderer().html(
            FleetPage(logs: [log], query: FleetQuery(), generatedAt: Self.now),
            signedIn: true
        )
        #expect(html.contains(Self.escaped))
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("Sign out"))
        #expect(html.contains("<th scope=\"row\">"))
    }

    @Test func hostileReasonsHashesAndCheckpointsAreTextOnTheLogPage() throws {
        let logId = String(repeating: "b", count: 32)
        let page = LogPage(
            logId: logId,
            summary: FleetLog(logId: logId, deviceId: Self.hostile),
            head: .object(["seq": .integer(3), "entryHash": .string(Self.hostile)]),
            checkpoint: Self.hostile + "\n",
            entries: [LogPage.Entry(seq: 3, bytes: [1, 2, 3], entryHash: [0xAB])],
            removals: [LogPage.Removal(recordSeq: 2, firstSeq: 0, lastSeq: 1, count: 2, recordBytes: [9])],
            incidents: [LogPage.Incident(seq: 1, kind: "fork", reason: Self.hostile, entryHash: [0xCD])],
            generatedAt: Self.now
        )
        let html = try PageRenderer().html(page, signedIn: false)
        #expect(!html.contains("<script>alert"))
        #expect(html.components(separatedBy: Self.escaped).count - 1 == 4)
        #expect(html.contains("(malformed)"))
        #expect(html.contains("(unreadable)"))
        #expect(!html.contains("Sign out"))
        #expect(page.entries[0].kind == nil)
    }

    @Test func hostileWitnessNamesAndProofInputsAreText() throws {
        let renderer = try PageRenderer()
        let witnesses = WitnessesPage(
            witnesses: [
                WitnessesPage.Witness(
                    name: Self.hostile,
                    url: "http://127.0.0.1:1/\"><script>",
                    vkey: Self.hostile,
                    logsCosigned: 1,
                    largestSize: 4,
                    lastCosigned: (logId: "00", size: 4, at: Self.now),
                    failures: 2,
                    lastFailure: (at: Self.now, reason: Self.hostile)
                )
            ],
            generatedAt: Self.now
        )
        let html = renderer.html(witnesses, signedIn: false)
        #expect(!html.contains("<script>"))
        #expect(html.contains("&quot;&gt;&lt;script&gt;"))
        var asked = ProofPage.Request()
        asked.log = "\"><script>alert(1)</script>"
        asked.seq = "x"
        let proof = ProofPage(request: asked, inclusion: .failed(Self.hostile), consistency: nil)
        let proofHTML = renderer.html(proof, signedIn: false)
        #expect(!proofHTML.contains("<script>alert"))
        #expect(proofHTML.contains("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""))
        #expect(proof.view.jsonHref == "/ui/proof.json?log=%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E&seq=x")
    }

    @Test func theSignInFormSaysWhyAndHowLong() throws {
        let html = try PageRenderer().signIn(error: Self.hostile, lifetime: .seconds(7200))
        #expect(html.contains("id=\"sign-in-error\""))
        #expect(html.contains(Self.escaped))
        #expect(html.contains("2 hours"))
        #expect(html.contains("type=\"password\""))
    }
}
