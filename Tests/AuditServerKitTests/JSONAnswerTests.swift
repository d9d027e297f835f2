import AuditChain
import AuditServerKit
import HTTPTypes
import HummingbirdCore
import Testing

@Suite struct JSONAnswerTests {
    @Test("a value is canonical JSON and a newline, typed application/json")
    func json() async throws {
        let response = JSONAnswer.json(.ok, .object(["seqs": .array([.integer(1)]), "a": .string("b")]))
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "application/json")
        #expect(try await ResponseBytes.of(response) == Array(#"{"a":"b","seqs":[1]}"#.utf8) + [0x0a])
    }

    @Test(
        "each endpoint keeps its error body: the collector's {error}, the read API's {error, reason}, the agent's {error, code}"
    )
    func errorShapes() async throws {
        let collector = JSONAnswer.error(.badRequest, "the body is not valid JSON")
        #expect(collector.status == .badRequest)
        #expect(
            try await ResponseBytes.of(collector) == Array(#"{"error":"the body is not valid JSON"}"#.utf8) + [0x0a]
        )
        let read = JSONAnswer.error(.notFound, "no such log", ["reason": .string("unknownLog")])
        #expect(
            try await ResponseBytes.of(read) == Array(#"{"error":"no such log","reason":"unknownLog"}"#.utf8) + [0x0a]
        )
        let agent = JSONAnswer.error(.contentTooLarge, "too large", ["code": .string("http413")])
        #expect(try await ResponseBytes.of(agent) == Array(#"{"code":"http413","error":"too large"}"#.utf8) + [0x0a])
    }

    @Test("a member named error never replaces the message, and hostile text is escaped")
    func hostile() async throws {
        let response = JSONAnswer.error(.badRequest, "quote \" and \n newline", ["error": .string("forged")])
        let bytes = try await ResponseBytes.of(response)
        #expect(bytes.last == 0x0a)
        #expect(bytes.dropLast().contains(0x0a) == false)
        let members = try JSONValue(parsing: Array(bytes.dropLast())).objectValue
        #expect(members?.count == 1)
        #expect(members?["error"]?.stringValue == "quote \" and \n newline")
    }
}
