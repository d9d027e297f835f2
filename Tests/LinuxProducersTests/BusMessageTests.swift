import AuditChain
import Foundation
import LinuxProducers
import Testing

@Suite("busctl's JSON lines")
struct BusMessageTests {
    @Test("every line of the recorded sessions parses, with its header fields and arguments")
    func recordedLinesParse() throws {
        for name in ["fprintd-named-user.jsonl", "fprintd-restart-caller.jsonl"] {
            let lines = try RecordedBus.lines(name)
            #expect(lines.count > 100)
            #expect(lines.allSatisfy { BusMessage(busctlLine: $0) != nil }, "\(name)")
        }
        let line = #"""
            {"type":"signal","endian":"l","flags":1,"version":1,"cookie":74,"timestamp-realtime":1795844906439574,\#
            "sender":":1.3","path":"/net/reactivated/Fprint/Device/0","interface":"net.reactivated.Fprint.Device",\#
            "member":"VerifyStatus","payload":{"type":"sb","data":["verify-no-match",true]}}
            """#
        let message = try #require(BusMessage(busctlLine: Array(line.utf8)))
        #expect(message.kind == .signal)
        #expect(message.cookie == 74)
        #expect(message.timestampMicros == 1_795_844_906_439_574)
        #expect(message.sender == ":1.3")
        #expect(message.path == "/net/reactivated/Fprint/Device/0")
        #expect(message.member == "VerifyStatus")
        #expect(message.string(at: 0) == "verify-no-match")
        #expect(message.bool(at: 1) == true)
        #expect(message.string(at: 1) == nil)
        #expect(message.string(at: 7) == nil)
    }

    @Test("a reply keeps its reply cookie and an error its name")
    func repliesAndErrors() throws {
        let reply =
            #"{"type":"method_return","cookie":41,"reply_cookie":15,"sender":":1.3","destination":":1.8","payload":{"type":"","data":[]}}"#
        let error =
            #"{"type":"error","cookie":7,"reply_cookie":6,"sender":"org.freedesktop.DBus","destination":":1.7","error_name":"org.freedesktop.DBus.Error.ServiceUnknown","payload":{"type":"s","data":["no"]}}"#
        let parsedReply = try #require(BusMessage(busctlLine: Array(reply.utf8)))
        #expect(parsedReply.kind == .methodReturn && parsedReply.replyCookie == 15 && parsedReply.arguments.isEmpty)
        let parsedError = try #require(BusMessage(busctlLine: Array(error.utf8)))
        #expect(parsedError.kind == .error && parsedError.errorName == "org.freedesktop.DBus.Error.ServiceUnknown")
    }

    @Test(
        "hostile and truncated lines give nil, never a trap",
        arguments: [
            "", "{", "[]", "null", #"{"type":"signal"}"#, #"{"cookie":1}"#, #"{"type":"bogus","cookie":1}"#,
            #"{"type":"signal","cookie":-1}"#, #"{"type":"signal","cookie":"1"}"#,
            #"{"type":"signal","cookie":1.5}"#, #"{"type":"signal","cookie":99999999999999999999}"#,
            #"{"type":"signal","cookie":1,"cookie":2}"#,
            #"{"type":"signal","cookie":1,"payload":{"type":"d","data":[0.5]}}"#,
            #"{"type":"method_call","endian":"l","flags":4,"version":1,"cookie":15,"timestamp-realtime":17958449006"#,
            "\u{FEFF}{\"type\":\"signal\",\"cookie\":1}",
        ]
    )
    func hostileLines(_ line: String) {
        #expect(BusMessage(busctlLine: Array(line.utf8)) == nil)
    }

    @Test("invalid UTF-8, deep nesting and a line past the bound give nil")
    func hostileBytes() {
        #expect(BusMessage(busctlLine: [0x7B, 0xFF, 0xFE, 0x7D]) == nil)
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(BusMessage(busctlLine: Array(#"{"type":"signal","cookie":1,"payload":{"data":\#(deep)}}"#.utf8)) == nil)
        let long =
            #"{"type":"signal","cookie":1,"member":""# + String(repeating: "x", count: BusMessage.maxBusctlLineBytes)
            + #""}"#
        #expect(BusMessage(busctlLine: Array(long.utf8)) == nil)
    }

    @Test("odd but valid fields are kept or left out, not trusted")
    func oddFields() throws {
        let line = #"{"type":"signal","cookie":0,"sender":5,"payload":{"type":"s","data":"not an array"}}"#
        let message = try #require(BusMessage(busctlLine: Array(line.utf8)))
        #expect(message.sender == nil)
        #expect(message.arguments.isEmpty)
        #expect(BusMessage.arguments(ofBusctlAnswer: Array(#"{"type":"s","data":[":1.3"]}"#.utf8)) == [.string(":1.3")])
        #expect(BusMessage.arguments(ofBusctlAnswer: Array("s \":1.3\"".utf8)) == nil)
    }
}
