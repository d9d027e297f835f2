import AuditChain
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

    @Test("canonical bytes sort keys bytewise, drop whitespace and escape minimally")
    func canonicalForm() throws {
        let value = try parse(#" { "b" : 1, "a" : [ true, null, "x\/y" ], "é": "\u00e9\t" , "B": -0 } "#)
        let text = String(decoding: value.canonicalBytes, as: UTF8.self)
        #expect(text == #"{"B":0,"a":[true,null,"x/y"],"b":1,"é":"é\t"}"#)
        #expect(try parse(text) == value)
    }

    @Test("strict parsing refuses what the format does not admit")
    func strictParsing() {
        let bad = [
            #"{"a": 1, "a": 2}"#, "1.5", "1e3", "01", "9007199254740992", #""\ud800""#, #""\udc00x""#,
            "[1,]", #"{"a" 1}"#, "tru", #""unterminated"#, "\"ctl\u{01}\"", "[1] [2]", "",
            String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
        ]
        for text in bad {
            #expect(throws: JSONValue.ParseError.self, "\(text)") { try parse(text) }
        }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: [0x22, 0xc3, 0x28, 0x22]) }
    }

    @Test("surrogate pairs and the integer limits parse")
    func acceptedEdges() throws {
        #expect(try parse(#""\ud83d\ude00""#) == .string("\u{1f600}"))
        // A plain run, then escapes: the fast path hands over to unescaping without losing the run.
        #expect(try parse(#""abc\"def\\g\nh""#) == .string("abc\"def\\g\nh"))
        #expect(try parse(#"["plain","",""]"#) == .array([.string("plain"), .string(""), .string("")]))
        #expect(try parse("9007199254740991") == .integer(9_007_199_254_740_991))
        #expect(try parse("-9007199254740991") == .integer(-9_007_199_254_740_991))
    }
}
