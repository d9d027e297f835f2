import AuditChain
import AuditStore
import Foundation
import Synchronization
import TestKit
import Testing

/// A child process appends continuously and is killed with SIGKILL at random instants; after each kill the log
/// verifies and every event the child reported as acknowledged is present.
@Suite("Crash and concurrency", .serialized)
struct CrashTests {
    /// A CrashChild, spawned with `posix_spawn` (``ChildProcess``); its standard output goes to a file (it writes each
    /// acknowledgement with one `write`, so a kill cuts at most the line being written).
    final class Child: Sendable {
        private let directory: TemporaryDirectory
        private let child: ChildProcess.Running
        /// How it ended, once ``acknowledged(timeout:)`` has waited for it.
        private let ended = Mutex<ChildProcess.Result?>(nil)

        init(
            state: String,
            label: String,
            count: Int,
            writers: Int,
            endingEpochs: Bool = false,
            erasing: Bool = false
        ) throws {
            directory = try TemporaryDirectory(prefix: "crash-child")
            var environment = ProcessInfo.processInfo.environment
            if endingEpochs { environment["CRASH_CHILD_EPOCHS"] = "1" }
            if erasing { environment["CRASH_CHILD_ERASE"] = "1" }
            child = try ChildProcess.start(
                CLIHarness.path("CrashChild"),
                [state, label, String(count), String(writers)],
                environment: environment,
                outputPath: directory.path + "/stdout",
                errorPath: "/dev/null"
            )
        }

        func kill() { child.send(SIGKILL) }

        /// Whether it ended by itself with status 0 (known once ``acknowledged(timeout:)`` has returned).
        var succeeded: Bool { ended.withLock { $0.map { !$0.signaled && $0.status == 0 } ?? false } }

        /// Waits for its exit (killing it after `timeout`, a cap for a child that hangs) and returns the
        /// acknowledged (seq, key) pairs.
        func acknowledged(timeout: Duration = .seconds(300)) async -> [(UInt64, String)] {
            let result = await child.wait(timeout: timeout)
            ended.withLock { $0 = result }
            return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
                let parts = line.split(separator: " ")
                // A line cut by the kill is incomplete and not an acknowledgement.
                guard parts.count == 3, parts[0] == "ack", let seq = UInt64(parts[1]), line.hasSuffix(parts[2]) else {
                    return nil
                }
                return (seq, String(parts[2]))
            }
        }

        deinit { child.end() }
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
            for (seq, key) in await child.acknowledged() { acknowledged[key] = seq }
            let report = try await CLIHarness.verify(state)
            #expect(report.isClean, "round \(round): \(report.problems)")
        }
        let stored = try await CLIHarness.idempotencyKeys(state)
        let lost = acknowledged.filter { stored[$0.key] != $0.value }
        #expect(lost.isEmpty, "acknowledged but missing: \(lost.prefix(5))")
        #expect(acknowledged.count > 20, "the child acknowledged too few events to test anything")
    }

    @Test(
        "format version 2: SIGKILL at random instants around epoch ends loses no acknowledged event, leaves one usable key"
    )
    func killedAroundEpochEnds() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--format-version", "2"]).status == 0)
        var generator = SystemRandomNumberGenerator()
        var acknowledged: [String: UInt64] = [:]
        for round in 0..<max(10, Self.rounds / 2) {
            let child = try Child(state: state, label: "e\(round)", count: 0, writers: 2, endingEpochs: true)
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...300, using: &generator)))
            child.kill()
            for (seq, key) in await child.acknowledged() { acknowledged[key] = seq }
            let report = try await CLIHarness.verify(state)
            #expect(report.isClean, "round \(round): \(report.problems)")
            // Keys: the active one, and at most leftovers of an interrupted erasure (an ended epoch's, or one whose
            // epoch record never committed): none of them signs anything a verifier accepts. The agent's start erases
            // them; afterwards the active key is the only one.
            let log = try CLIHarness.openLog(state)
            let active = try log.activeSigningKey().id
            #expect(log.keys.signingKeyFileIds().contains(active))
            _ = try await log.eraseRetiredSigningKeys()
            #expect(log.keys.signingKeyFileIds() == [active], "round \(round)")
        }
        let stored = try await CLIHarness.idempotencyKeys(state)
        let lost = acknowledged.filter { stored[$0.key] != $0.value }
        #expect(lost.isEmpty, "acknowledged but missing: \(lost.prefix(5))")
        #expect(acknowledged.count > 10, "the child acknowledged too few events to test anything")
        let summary = try await CLIHarness.auditctl(state, ["verify", "--json"])
        #expect(summary.status == 0 && summary.stdout.contains("\"formatVersion\":2"))
    }

    @Test("SIGKILL at random instants during erasures: a subject's key is gone only with its erasure record")
    func killedDuringErasures() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init", "--subject-keys"]).status == 0)
        var generator = SystemRandomNumberGenerator()
        var erasedBefore = 0
        for round in 0..<max(10, Self.rounds / 2) {
            let child = try Child(state: state, label: "x\(round)", count: 0, writers: 1, erasing: true)
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...300, using: &generator)))
            child.kill()
            _ = await child.acknowledged()
            // With the keys the table still holds, every subject event opens or is erased by a record: a key gone
            // without its record would be payloadUndecryptable.
            let report = try await CLIHarness.verify(state)
            #expect(report.isClean, "round \(round): \(report.problems)")
            #expect(report.erasures.allSatisfy { $0.entriesErased == 3 }, "round \(round)")
            erasedBefore = report.erasures.count
        }
        #expect(erasedBefore > 3, "the child erased too few subjects to test anything")
    }

    @Test("two processes appending concurrently produce one valid chain with all events")
    func twoProcesses() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        #expect(try await CLIHarness.auditctl(state, ["init"]).status == 0)
        let first = try Child(state: state, label: "a", count: 150, writers: 2)
        let second = try Child(state: state, label: "b", count: 150, writers: 2)
        let acks = await first.acknowledged() + second.acknowledged()
        #expect(first.succeeded && second.succeeded)
        #expect(acks.count == 600)
        #expect(Set(acks.map(\.0)).count == 600, "a sequence number was handed out twice")
        let report = try await CLIHarness.verify(state)
        #expect(report.isClean, "\(report.problems)")
        let stored = try await CLIHarness.idempotencyKeys(state)
        #expect(acks.allSatisfy { stored[$0.1] == $0.0 })
        #expect(stored.count == 600)
    }
}
