import AuditChain
import Foundation
import Testing
import TestKit

/// The hostile-integer corpus (issue 20, item 3) against `auditctl`: every command that reads someone else's bytes
/// exits 2 with a message, never traps.
@Suite struct HostileIntegerCLITests {
    static let integers = ["-9223372036854775808", "18446744073709551615", "99999999999999999999", "1e400"]

    @Test func emitJSONRefusesHostileIntegers() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--device-id", "d"]).status == 0)
        for number in Self.integers {
            let line =
                #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"u","deviceId":"d","attributes":{"unlockDurationMs":\#(number)}}"#
            let result = try await CLIHarness.auditctl(state, ["emit", "--input", "-"], stdin: line + "\n")
            #expect(result.status == 2, "\(number): \(result.status) \(result.stderr)")
            #expect(!result.stderr.isEmpty)
        }
    }

    @Test func verifyRefusesHostileBundlesAndCheckpoints() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--device-id", "d"]).status == 0)
        let bundle = state + "/good.bundle"
        #expect(try await CLIHarness.auditctl(state, ["export", "--out", bundle]).status == 0)
        let lines = try String(contentsOfFile: bundle, encoding: .utf8).split(separator: "\n").map(String.init)
        for number in Self.integers {
            // The header's lastSeq, and the first entry line's seq.
            var header = lines[0]
            header = header.replacingOccurrences(
                of: #""lastSeq":\d+"#,
                with: #""lastSeq":\#(number)"#,
                options: .regularExpression
            )
            var entry = lines[1]
            entry = entry.replacingOccurrences(
                of: #""seq":\d+"#,
                with: #""seq":\#(number)"#,
                options: .regularExpression
            )
            for (name, content) in [("header", [header] + lines.dropFirst()), ("entry", [lines[0], entry])] {
                let file = state + "/hostile-\(name).bundle"
                try Data((content.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
                let result = try await CLIHarness.auditctl(state, ["verify", "--bundle", file])
                #expect(result.status == 1 || result.status == 2, "\(name) \(number): \(result.status)")
                #expect(!result.stdout.isEmpty || !result.stderr.isEmpty)
            }
            let checkpoint = state + "/hostile.checkpoint"
            let text = #"{"entryHash":"00","logId":"00","seq":\#(number),"signature":"00","signingKeyId":"00","v":1}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: checkpoint))
            let result = try await CLIHarness.auditctl(state, ["verify", "--checkpoint", checkpoint])
            #expect(result.status == 2, "checkpoint \(number): \(result.status) \(result.stderr)")
        }
    }
}
