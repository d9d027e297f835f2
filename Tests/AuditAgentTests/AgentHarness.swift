import AuditAgent
import AuditServerKit
import AuditChain
import AuditStore
import Foundation
import TestKit
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A short temporary directory (unix socket paths are limited to ~100 bytes), removed when released.
typealias AgentTempDir = ShortTemporaryDirectory

extension ShortTemporaryDirectory {
    /// `/tmp/agent-<8 hex digits>`.
    convenience init() throws { try self.init(prefix: "agent") }
}

/// Starts agents in-process and talks to them.
enum AgentHarness {
    /// Log lines the agent wrote (for assertions on what it logs).
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// A configuration on `<dir>/state` with loopback TCP ingest and metrics on free ports.
    static func configuration(_ dir: AgentTempDir) -> AgentConfiguration {
        var configuration = AgentConfiguration()
        configuration.stateDirectory = dir.file("state")
        configuration.listen = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.metrics = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.syncInterval = .milliseconds(200)
        configuration.shutdownTimeout = .seconds(5)
        // In-process: a cancellation slowed past a bound by the suite's other work (which shares this process's
        // concurrency pool) would end the whole test process with swift-service-lifecycle's fatal error.
        configuration.cancellationTimeout = nil
        return configuration
    }

    /// Runs an agent for the duration of `body`, then shuts it down gracefully and waits for it to stop.
    @discardableResult
    static func withAgent<T: Sendable>(
        _ configuration: AgentConfiguration,
        lines: Lines = Lines(),
        _ body: (Agent, AgentEndpoints) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "auditd-test") { label in
            StructuredLogHandler(label: label, level: .debug) { line in
                lines.append(line)
                if ProcessInfo.processInfo.environment["AGENT_TEST_LOG"] != nil {
                    StructuredLogHandler.standardError(line)
                }
            }
        }
        let agent = try await Agent(configuration: configuration, logger: logger)
        let task = Task { try await agent.run() }
        do {
            // Generous: the suite's other tests, run in parallel in this process, keep both cores busy and share its
            // concurrency pool with the agent.
            let endpoints = try await agent.waitUntilListening(timeout: .seconds(90))
            let result = try await body(agent, endpoints)
            await agent.shutdown()
            try await task.value
            return result
        } catch {
            await agent.shutdown()
            try? await task.value
            throw error
        }
    }

    /// Posts three events to a running agent and waits until nothing is pending (delivered to its backend); the cap
    /// is for what never comes.
    static func postThreeAndWaitDelivered(_ endpoints: AgentEndpoints) async throws {
        let ingest = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
        let lines = (0..<3).map { event(user: "user-\($0)") }.joined(separator: "\n")
        #expect(try await ingest.post("/v1/events", lines).status == 200)
        var pending = -1
        for _ in 0..<600 {
            pending = try await ingest.get("/v1/status").json["pending"] as? Int ?? -1
            if pending == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(pending == 0)
    }

    /// Opens a state directory's log in-process.
    static func openLog(_ stateDirectory: String) throws -> AuditLog {
        let state = StateDirectory(path: stateDirectory)
        return try AuditLog(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil)
        )
    }

    /// The decrypted events of a log, by sequence number.
    static func events(_ log: AuditLog) throws -> [UInt64: AuditEvent] {
        let keys = try log.keys.readingKeysById()
        var found: [UInt64: AuditEvent] = [:]
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            guard entry.header.kind == .event, let key = keys[entry.header.dataKeyId] else { return true }
            found[stored.seq] = try AuditEvent(canonicalPayload: entry.openPayload(with: key))
            return true
        }
        return found
    }

    /// The head sequence number of a log.
    static func headSeq(_ log: AuditLog) throws -> UInt64 { try log.info().head.seq }

    /// The head's seq after an agent stopped, not counting the close record a graceful stop of a format version 2
    /// log seals (docs/FORMAT.md section 13.3) when the head is one.
    static func headSeqBeforeClose(_ log: AuditLog) throws -> UInt64 {
        let head = try log.info().head.seq
        guard head > 0, let last = try log.storage.entries(from: head, through: head, limit: 1).first,
            try SealedEntry(serialized: last.bytes).header.kind == .close
        else { return head }
        return head - 1
    }

    /// One producer event in the ingest JSON.
    static func event(
        user: String = "alice",
        type: String = "BIOMETRIC_AUTH_SUCCESS",
        duration: String = "412"
    )
        -> String
    {
        #"{"type":"\#(type)","userId":"\#(user)","deviceId":"phone-1","attributes":{"unlockDurationMs":\#(duration)}}"#
    }

    /// A failure event with an attempt count.
    static func failure(attemptCount: String) -> String {
        #"{"type":"BIOMETRIC_AUTH_FAILURE","userId":"bob","deviceId":"phone-1","attributes":"#
            + #"{"attemptCount":\#(attemptCount),"errorCode":"ERR-107-030"}}"#
    }
}

/// The built executables beside the test binary.
enum AgentProducts {
    static let directory: String = {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }()

    static func path(_ product: String) -> String { directory + "/" + product }

    /// The test process's environment without the agent's settings, state directory or credentials, so that a child
    /// `auditd` reads only what its test gives it.
    static var cleanEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AUDITD_") }
        environment["AUDIT_STATE_DIR"] = nil
        environment["CREDENTIALS_DIRECTORY"] = nil
        return environment
    }

    /// Starts `auditd` with a clean environment (no state directory or credentials inherited).
    static func startAuditd(_ arguments: [String], environment: [String: String] = [:]) throws -> AgentChild {
        try AgentChild(path("auditd"), arguments, environment: cleanEnvironment.merging(environment) { _, new in new })
    }

    /// Runs `auditd` to completion (killed after `timeout`).
    static func runAuditd(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> AgentChild.Result {
        try await startAuditd(arguments).wait(timeout: timeout)
    }
}

/// A running `auditd` (or a shell that execs it), spawned with `posix_spawn` (``ChildProcess``), its standard output
/// and error in files of a temporary directory of its own.
final class AgentChild: Sendable {
    struct Result {
        var exited: Bool
        var status: Int32
        var stdout: String
        var stderr: String
    }

    private let directory: TemporaryDirectory
    private let child: ChildProcess.Running

    /// Starts `path` with `arguments` and exactly `environment`.
    init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        directory = try TemporaryDirectory(prefix: "agent-child")
        child = try ChildProcess.start(
            path,
            arguments,
            environment: environment,
            outputPath: directory.path + "/stdout",
            errorPath: directory.path + "/stderr"
        )
    }

    /// Its process id.
    var pid: pid_t { child.pid }

    /// Whether it still runs.
    var isRunning: Bool { child.isRunning }

    /// Sends `signal` to it.
    func send(_ signal: Int32) { child.send(signal) }

    /// What it wrote so far to its standard error.
    var errors: String { child.errors }

    /// What it wrote so far to its standard output.
    var output: String { child.output }

    /// Killed and reaped if the test left it running.
    deinit { child.end() }

    /// Waits for the exit, killing the process after `timeout` (a cap for a child that hangs); collects its output.
    func wait(timeout: Duration) async throws -> Result {
        let result = await child.wait(timeout: timeout)
        return Result(
            exited: !result.signaled,
            status: result.status,
            stdout: String(decoding: result.stdout, as: UTF8.self),
            stderr: String(decoding: result.stderr, as: UTF8.self)
        )
    }
}
