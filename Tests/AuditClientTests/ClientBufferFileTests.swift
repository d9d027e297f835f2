import AuditChain
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

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
            // A saved report must be the client's own AUDIT_EVENTS_DROPPED, of its reason, with a positive count:
            // it is re-sent as it is, first in every request.
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[{"reason":"overflow","event":\#(event)}],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[{"reason":"overflow","event":\#(Self.report(reason: "refused", count: 1))}],"drops":[]}"#,
            #"{"format":"audit-client-buffer","version":1,"events":[],"reports":[{"reason":"overflow","event":\#(Self.report(reason: "overflow", count: 0))}],"drops":[]}"#,
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
        // The same file with a valid tally and report is accepted (the cases above differ from it in one member).
        let valid =
            #"{"format":"audit-client-buffer","version":1,"events":[\#(event)],"reports":[{"reason":"overflow","#
            + #""event":\#(Self.report(reason: "overflow", count: 2))}],"drops":[\#(tally)"#
            + #""lastOccurredAt":"2026-11-18T11:06:40.000Z"}]}"#
        let saved = try? Self.file.decode(Array(valid.utf8))
        #expect(saved?.items.count == 1)
        #expect(saved?.reports.map(\.count) == [2])
    }

    /// A saved drop report: an `AUDIT_EVENTS_DROPPED` event with `reason` and `count`.
    static func report(reason: String, count: Int) -> String {
        #"{"type":"AUDIT_EVENTS_DROPPED","userId":"audit-client","deviceId":"host","attributes":{"count":\#(count),"#
            + #""critical":0,"reason":"\#(reason)","firstOccurredAt":"2026-11-18T11:06:40.000Z","#
            + #""lastOccurredAt":"2026-11-18T11:06:40.000Z"},"occurredAt":"2026-11-18T11:06:41.000Z","#
            + #""idempotencyKey":"report-1"}"#
    }

    /// Writes a valid, empty buffer file at `path` (mode 0600).
    static func writeEmpty(_ path: String) throws {
        try Data(#"{"format":"audit-client-buffer","version":1,"events":[],"reports":[],"drops":[]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
    }

    @Test func aSymbolicLinkIsRefusedNotFollowed() throws {
        let dir = try ClientTempDir()
        let target = dir.file("real.json")
        try Self.writeEmpty(target)
        #expect(try ClientBufferFile(path: target, catalogue: .builtIn).load(maxBytes: 1 << 20) != nil)
        let link = dir.file("link.json")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        do {
            _ = try ClientBufferFile(path: link, catalogue: .builtIn).load(maxBytes: 1 << 20)
            Issue.record("a symbolic link was followed")
        } catch {
            #expect(error.code == .bufferFile)
            #expect(error.message.contains("is a symbolic link"))
        }
    }

    /// Needs root, to give the file to another user.
    @Test(.enabled(if: geteuid() == 0)) func aFileOwnedByAnotherUserIsRefused() throws {
        let dir = try ClientTempDir()
        let path = dir.file("theirs.json")
        try Self.writeEmpty(path)
        #expect(chown(path, 65534, 65534) == 0)
        do {
            _ = try ClientBufferFile(path: path, catalogue: .builtIn).load(maxBytes: 1 << 20)
            Issue.record("a file owned by another user was read")
        } catch {
            #expect(error.code == .bufferFile)
            #expect(error.message.contains("owned by another user"))
        }
    }
}
