import AuditChain
import Foundation
import LinuxProducers
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// PAMReporter in process, against no agent: what it keeps, drops and counts (the stack with an agent is
/// PAMStackTests).
@Suite("PAM reporter without an agent")
struct PAMReporterTests {
    static let request = PAMRequest(
        outcome: .failure,
        environment: ["PAM_USER": "alice", "PAM_SERVICE": "sshd", "PAM_RHOST": "192.0.2.7"]
    )

    static func configuration(_ directory: ShortTemporaryDirectory) -> PAMReporter.Configuration {
        var configuration = PAMReporter.Configuration(socketPath: directory.file("no-agent.sock"))
        configuration.deviceId = "host-1"
        return configuration
    }

    @Test("without a buffer file the event is dropped; with one it is kept, and the next run keeps both")
    func keptOrDropped() async throws {
        let directory = try ShortTemporaryDirectory(prefix: "pamr")
        var configuration = Self.configuration(directory)
        let (event, dropped) = await PAMReporter(configuration: configuration).report(Self.request)
        #expect(event.type == "PASSWORD_AUTH_FAILURE" && event.userId == "alice" && event.deviceId == "host-1")
        guard case .dropped = dropped else {
            Issue.record("expected dropped, got \(dropped)")
            return
        }
        configuration.bufferFile = directory.file("buffer")
        for _ in 0..<2 {
            let (_, kept) = await PAMReporter(configuration: configuration).report(Self.request)
            guard case .buffered = kept else {
                Issue.record("expected buffered, got \(kept)")
                return
            }
        }
        let saved = try String(contentsOfFile: directory.file("buffer"), encoding: .utf8)
        #expect(saved.components(separatedBy: "PASSWORD_AUTH_FAILURE").count - 1 == 2)
        var info = stat()
        #expect(stat(directory.file("buffer"), &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test("attempts count across runs in the attempts file; a file others can read is refused and counts 1")
    func attempts() async throws {
        let directory = try ShortTemporaryDirectory(prefix: "pamr")
        var configuration = Self.configuration(directory)
        configuration.attemptsFile = directory.file("attempts")
        var counts: [JSONValue?] = []
        for _ in 0..<3 {
            counts.append(
                await PAMReporter(configuration: configuration).report(Self.request).event.attributes["attemptCount"]
            )
        }
        #expect(counts == [1, 2, 3])
        chmod(directory.file("attempts"), 0o644)
        let refused = await PAMReporter(configuration: configuration).report(Self.request).event
        #expect(refused.attributes["attemptCount"] == 1)
        // A damaged file counts as empty.
        chmod(directory.file("attempts"), 0o600)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: directory.file("attempts")))
        let damaged = await PAMReporter(configuration: configuration).report(Self.request).event
        #expect(damaged.attributes["attemptCount"] == 1)
    }

    @Test("a buffer file others can read is refused: the event is dropped, not written there")
    func unsafeBufferFile() async throws {
        let directory = try ShortTemporaryDirectory(prefix: "pamr")
        var configuration = Self.configuration(directory)
        configuration.bufferFile = directory.file("buffer")
        try Data().write(to: URL(fileURLWithPath: directory.file("buffer")))
        chmod(directory.file("buffer"), 0o644)
        let (_, result) = await PAMReporter(configuration: configuration).report(Self.request)
        guard case .dropped = result else {
            Issue.record("expected dropped, got \(result)")
            return
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("buffer"))).isEmpty)
    }
}
