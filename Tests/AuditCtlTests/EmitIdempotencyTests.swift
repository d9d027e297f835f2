import AuditChain
import Foundation
import Testing
import AuditStore
import TestKit

/// `auditctl emit` de-duplicates on the idempotency key like the agent: a retry prints the original seq.
@Suite("auditctl emit idempotency")
struct EmitIdempotencyTests {
    static let event =
        #"{"type":"BIOMETRIC_AUTH_FAILURE","userId":"bob","deviceId":"phone-1","attributes":{"attemptCount":1,"#
        + #""errorCode":"ERR-107-030"},"occurredAt":"2026-11-21T10:00:00Z","idempotencyKey":"emit-retry-1"}"#

    @Test("emitting the same event twice prints the original seq and writes one entry")
    func retryPrintsOriginalSeq() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"]).status == 0)
        let first = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: Self.event)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("appended seq 1 "))
        let retry = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: Self.event + "\n")
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stdout == "already " + first.stdout)
        #expect(try await CLIHarness.idempotencyKeys(state) == ["emit-retry-1": 1])
        #expect(try CLIHarness.openLog(state).info().head.seq == 1)
    }

    @Test("the same key with another event exits 2 naming the original seq, and writes nothing")
    func conflictExits2() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"]).status == 0)
        #expect(try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: Self.event).status == 0)
        let other = Self.event.replacingOccurrences(of: #""attemptCount":1"#, with: #""attemptCount":2"#)
        let refused = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: other)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("seq 1"))
        #expect(!refused.stderr.contains("emit-retry-1"))
        #expect(try CLIHarness.openLog(state).info().head.seq == 1)
    }

    @Test("an event without occurredAt emitted twice is one entry; another event under its key exits 2")
    func retryWithoutOccurredAt() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"]).status == 0)
        let event =
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"alice","deviceId":"phone-1","#
            + #""attributes":{"unlockDurationMs":412},"idempotencyKey":"emit-unstamped"}"#
        let first = try await CLIHarness.auditctl(state, ["emit", "--input", "-", "--json"], stdin: event)
        #expect(first.status == 0, "\(first.stderr)")
        // Each run stamps its own time; the second is still a retry of the first.
        let retry = try await CLIHarness.auditctl(state, ["emit", "--input", "-", "--json"], stdin: event)
        #expect(retry.status == 0, "\(retry.stderr)")
        let answers = try [first, retry].map { try #require(try JSONValue(parsing: Array($0.stdout.utf8)).objectValue) }
        let entries = answers.map { answer -> [String: JSONValue]? in
            guard case .array(let list)? = answer["entries"] else { return nil }
            return list.first?.objectValue
        }
        #expect(entries.map { $0?["seq"] } == [1, 1])
        #expect(entries.map { $0?["duplicate"] } == [false, true])
        #expect(entries[0]?["entryHash"] == entries[1]?["entryHash"])
        let other = event.replacingOccurrences(of: "412", with: "413")
        let refused = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: other)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("seq 1"))
        #expect(try CLIHarness.openLog(state).info().head.seq == 1)
    }
}
