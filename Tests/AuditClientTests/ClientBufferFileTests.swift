import AuditChain
import Foundation
import Testing

@testable import AuditClient

/// The buffer file's format: what is written reads back the same; hostile or damaged content is refused with the
/// file named, never given new keys or times.
@Suite struct ClientBufferFileTests {
    static let file = ClientBufferFile(path: "/tmp/none", catalogue: .builtIn)

    @Test func aBufferReadsBackWithItsKeysTimesReportsAndTallies() throws {
        var buffer = ClientBuffer(capacity: 2)
        buffer.add(ClientBufferTests.item("a", at: 1_795_000_000_001))
        buffer.add(ClientBufferTests.item("b", critical: true, at: 1_795_000_000_002))
        buffer.add(ClientBufferTests.item("c", at: 1_795_000_000_003))
        _ = buffer.offerReports { reason, tally in
            DropReport(
                reason: reason,
                tally: tally,
                userId: "audit-client",
                deviceId: "host",
                now: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_009),
                key: "report-1"
            )
        }
        buffer.add(ClientBufferTests.item("d", at: 1_795_000_000_004))
        let bytes = ClientBufferFile.encode(buffer).canonicalBytes
        let saved = try Self.file.decode(bytes)
        #expect(saved.items == buffer.items)
        #expect(saved.reports == buffer.reports)
        #expect(saved.open == buffer.open)
        #expect(saved.items.map(\.isCritical) == [true, false])
    }

    @Test func damagedFilesAreRefused() {
        let event =
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"u","deviceId":"d","attributes":{},"#
            + #""occurredAt":"2026-11-18T11:06:40.000Z","idempotencyKey":"k"}"#
        let tally = #"{"reason":"overflow","count":2,"critical":0,"firstOccurredAt":"2026-11-18T11:06:40.000Z","#
        let cases = [
            "", "[]", #"{"format":"other","version":1,"events":[],"reports":[],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":2,"events":[],"reports":[],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[7],"reports":[],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[\#(event.replacingOccurrences(of: #","idempotencyKey":"k""#, with: ""))],"reports":[],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[{"reason":"bored","event":\#(event)}],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[],"drops":[\#(tally)"lastOccurredAt":"x"}]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[],"drops":[\#(tally.replacingOccurrences(of: #""count":2"#, with: #""count":0"#))"lastOccurredAt":"2026-11-18T11:06:40.000Z"}]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[],"drops":[\#(tally.replacingOccurrences(of: #""critical":0"#, with: #""critical":3"#))"lastOccurredAt":"2026-11-18T11:06:40.000Z"}]}"#,
        ]
        for text in cases {
            do {
                _ = try Self.file.decode(Array(text.utf8))
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.code == .bufferFile)
                #expect(error.message.hasPrefix("buffer file /tmp/none"))
            }
        }
        // The same file with a valid tally is accepted (the cases above differ from it in one member each).
        let valid =
            #"{"format":"audit-client-buffer","version":1,"events":[\#(event)],"reports":[],"drops":[\#(tally)"#
            + #""lastOccurredAt":"2026-11-18T11:06:40.000Z"}]}"#
        #expect((try? Self.file.decode(Array(valid.utf8)))?.items.count == 1)
    }
}
