import AuditChain
import Testing

@testable import CollectorUI

@Suite struct ProofPageTests {
    static let logId = String(repeating: "c", count: 32)

    @Test func anAnswerIsShownAndLinksItsDownload() throws {
        let answer = JSONValue.object([
            "v": 2, "logId": .string(Self.logId), "seq": 7, "leafIndex": 6, "treeSize": 9,
            "checkpoint": "origin\n9\nroot\n", "inclusion": .array(["aGFzaA=="]), "entry": "ZW50cnk=",
        ])
        let page = ProofPage(
            request: ProofPage.Request(parameters: [("log", Self.logId), ("seq", "7")]),
            inclusion: .answer(answer),
            consistency: .failed("no")
        )
        #expect(page.downloadPath == "/ui/logs/\(Self.logId)/proof.tlog-proof?seq=7")
        let json = page.json.objectValue
        #expect(json?["inclusion"]?.objectValue?["answer"] == answer)
        #expect(json?["consistency"] == .object(["error": "no"]))
        let html = try PageRenderer().html(page, signedIn: false)
        #expect(html.contains("Entry 7 is leaf 6 of a tree of 9"))
        #expect(html.contains("<code>aGFzaA==</code>"))
        #expect(html.contains("id=\"consistency-error\""))
    }

    @Test func anEmptyRequestShowsTheFormOnly() throws {
        let page = ProofPage(request: ProofPage.Request(), inclusion: nil, consistency: nil)
        #expect(page.json.objectValue?["inclusion"] == .null)
        let html = try PageRenderer().html(page, signedIn: false)
        #expect(html.contains("<form method=\"get\" action=\"/ui/proof\""))
        #expect(!html.contains("id=\"inclusion\""))
    }

    @Test func percentEncodingLeavesOnlyUnreservedCharacters() {
        #expect(ProofPage.percentEncoded("aZ09-._~") == "aZ09-._~")
        #expect(ProofPage.percentEncoded("a b&c=é") == "a%20b%26c%3D%C3%A9")
    }
}
