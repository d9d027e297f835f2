import AuditChain
import Foundation
import TestKit
import Testing

/// A child process appends continuously and is killed with SIGKILL at random instants; after each kill the log
/// verifies and every event the child reported as acknowledged is present.
@Suite("Crash and concurrency", .serialized)
struct CrashTests {
    /// Starts a CrashChild; its stdout is collected on a background queue.
    final class Child: @unchecked Sendable {
        let process = Process()
        private let lock = NSLock()
        private var output = Data()
        private let done = DispatchSemaphore(value: 0)

        init(state: String, label: String, count: Int, writers: Int) throws {
            process.executableURL = URL(fileURLWithPath: CLIHarness.path("CrashChild"))
            process.arguments = [state, label, String(count), String(writers)]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let handle = pipe.fileHandleForReading
            // A thread of its own: blocked reading for the child's whole life, it must not hold one of Dispatch's
            // shared threads.
            Thread {
                while true {
                    guard let chunk = handle.readChunkRetrying(), !chunk.isEmpty else { break }
                    self.lock.withLock { self.output.append(chunk) }
                }
                self.done.signal()
            }.start()
        }

        func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }

        /// Waits for exit (bounded, on a thread of its own) and returns the acknowledged (seq, key) pairs.
        func acknowledged(timeout: TimeInterval = 120) async throws -> [(UInt64, String)] {
            try await CLIHarness.offPool { self.waitForAcknowledged(timeout: timeout) }
        }

        private func waitForAcknowledged(timeout: TimeInterval) -> [(UInt64, String)] {
            _ = done.wait(timeout: .now() + timeout)
            process.waitUntilExit()
            let text = lock.withLock { String(decoding: output, as: UTF8.self) }
            return text.split(separator: "\n").compactMap { line in
                let parts = line.split(separator: " ")
                // A line cut by the kill is incomplete and not an acknowledgement.
                guard parts.count == 3, parts[0] == "ack", let seq = UInt64(parts[1]), line.hasSuffix(parts[2]) else {
                    return nil
                }
                return (seq, String(parts[2]))
            }
        }
    }

    /// Rounds of the crash test: 20 in the suite; `scripts/crash-test N` runs more.
    static let rounds = ProcessInfo.processInfo.environment["AUDIT_CRASH_ROUNDS"].flatMap(Int.init) ?? 20

    @Test("SIGKILL at random instants loses no acknowledged event and leaves a log that verifies (20+ rounds)")
    func killedAppender() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init"]).status == 0)
        var generator = SystemRandomNumberGenerator()
        var acknowledged: [String: UInt64] = [:]
        for round in 0..<max(20, Self.rounds) {
            let child = try Child(state: state, label: "r\(round)", count: 0, writers: 4)
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...300, using: &generator)))
            child.kill()
            for (seq, key) in try await child.acknowledged() { acknowledged[key] = seq }
            let report = try await CLIHarness.verify(state)
            #expect(report.isClean, "round \(round): \(report.problems)")
        }
        let stored = try await CLIHarness.idempotencyKeys(state)
        let lost = acknowledged.filter { stored[$0.key] != $0.value }
        #expect(lost.isEmpty, "acknowledged but missing: \(lost.prefix(5))")
        #expect(acknowledged.count > 20, "the child acknowledged too few events to test anything")
    }

    @Test("two processes appending concurrently produce one valid chain with all events")
    func twoProcesses() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init"]).status == 0)
        let first = try Child(state: state, label: "a", count: 150, writers: 2)
        let second = try Child(state: state, label: "b", count: 150, writers: 2)
        let acks = try await first.acknowledged() + second.acknowledged()
        #expect(first.process.terminationStatus == 0 && second.process.terminationStatus == 0)
        #expect(acks.count == 600)
        #expect(Set(acks.map(\.0)).count == 600, "a sequence number was handed out twice")
        let report = try await CLIHarness.verify(state)
        #expect(report.isClean, "\(report.problems)")
        let stored = try await CLIHarness.idempotencyKeys(state)
        #expect(acks.allSatisfy { stored[$0.1] == $0.0 })
        #expect(stored.count == 600)
    }
}
