import AuditAgent
import AuditServerKit
import Foundation
import Logging
import Synchronization
import Testing

/// The structured log handler: logfmt quoting, JSON lines, levels.
@Suite struct AgentLogHandlerTests {
    final class Captured: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
    }

    static func logger(_ format: AgentConfiguration.LogFormat, _ captured: Captured) -> Logger {
        Logger(label: "auditd") { label in
            StructuredLogHandler(label: label, level: .info, format: format) { line in
                captured.lines.withLock { $0.append(line) }
            }
        }
    }

    @Test func logfmtQuotesValuesThatNeedIt() throws {
        let captured = Captured()
        let logger = Self.logger(.logfmt, captured)
        logger.info("entries left delivery", metadata: ["count": "3", "reason": "fifo", "detail": "a \"b\"=c"])
        logger.debug("not written")
        let line = try #require(captured.all.first)
        #expect(captured.all.count == 1)
        #expect(line.hasPrefix("ts="))
        #expect(line.hasSuffix("\n"))
        #expect(line.contains(" level=info label=auditd msg=\"entries left delivery\" "))
        #expect(line.contains(" count=3 "))
        #expect(line.contains(#" detail="a \"b\"=c" "#))
        #expect(line.contains(" reason=fifo\n"))
    }

    @Test func jsonLinesParse() throws {
        let captured = Captured()
        Self.logger(.json, captured).warning("backend unavailable", metadata: ["reason": "timeout\nagain"])
        let line = try #require(captured.all.first)
        #expect(line.hasSuffix("}\n"))
        #expect(line.dropLast().contains("\n") == false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["level"] == "warning")
        #expect(object["msg"] == "backend unavailable")
        #expect(object["reason"] == "timeout\nagain")
        #expect(object["ts"]?.hasSuffix("Z") == true)
    }
}
