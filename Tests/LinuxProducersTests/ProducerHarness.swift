import AuditChain
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the end-to-end tests of the producers share: the built `auditd` and `auditctl` beside the test binary,
/// children spawned with TestKit's ``ChildProcess`` (posix_spawn), an agent started and stopped, its log read back.
enum ProducerHarness {
    /// The directory of the built products.
    static let productsDirectory: String = {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }()

    /// A built product's path.
    static func product(_ name: String) -> String { productsDirectory + "/" + name }

    /// Whether every program or library in `paths` exists.
    static func installed(_ paths: [String]) -> Bool {
        paths.allSatisfy { access($0, F_OK) == 0 }
    }

    /// Whether the tests that need system packages must run: when they are installed, and always in CI (where
    /// scripts/test installs them, so that a missing package fails loudly instead of skipping).
    static func mustRun(_ paths: [String]) -> Bool {
        installed(paths) || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// This process's environment less what would point the children elsewhere.
    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["AUDIT_STATE_DIR", "CREDENTIALS_DIRECTORY", "DBUS_SYSTEM_BUS_ADDRESS", "LD_PRELOAD"] {
            environment[name] = nil
        }
        return environment
    }

    /// Runs a program to completion off the concurrency pool (killed after `timeout` seconds: a cap for a hang).
    static func run(
        _ path: String,
        _ arguments: [String],
        environment: [String: String] = environment,
        stdin: String? = nil,
        timeout: TimeInterval = 120
    ) async throws -> ChildProcess.Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try ChildProcess.run(
                            path,
                            arguments,
                            environment: environment,
                            stdin: stdin.map { Data($0.utf8) },
                            timeout: timeout
                        )
                    }
                )
            }.start()
        }
    }

    /// Polls `condition` every 50 ms until it holds; false if it never did within `cap` (a cap for a hang, not a
    /// bound on how long it should take).
    static func eventually(cap: Duration = .seconds(120), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + cap
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    /// Starts the agent on `state` and waits for its socket; the caller stops it (``stop(_:)``).
    static func startAgent(_ state: String, output: String) async throws -> ChildProcess.Running {
        let agent = try ChildProcess.start(
            product("auditd"),
            ["run", "--state-dir", state],
            environment: environment,
            outputPath: output
        )
        let socket = state + "/ingest.sock"
        let ready = await eventually { FileManager.default.fileExists(atPath: socket) || !agent.isRunning }
        if !ready || !agent.isRunning {
            agent.end()
            Issue.record("the agent did not start: \(agent.output)")
        }
        return agent
    }

    /// Stops a child with SIGTERM and waits for it (SIGKILL after a cap).
    @discardableResult
    static func stop(_ child: ChildProcess.Running) async -> ChildProcess.Result {
        child.send(SIGTERM)
        return await child.wait(timeout: .seconds(60))
    }

    /// The events of the log at `state`, decrypted, in order (`auditctl log --decrypt --json`).
    static func events(_ state: String) async throws -> [AuditEvent] {
        let result = try await run(product("auditctl"), ["log", "--decrypt", "--json", "--state-dir", state])
        try #require(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        guard case .array(let entries) = try JSONValue(parsing: Array(result.stdout)) else { return [] }
        return entries.compactMap { entry in
            guard let event = entry.objectValue?["event"]?.objectValue,
                let type = event["type"]?.stringValue,
                let user = event["userId"]?.stringValue,
                let device = event["deviceId"]?.stringValue
            else { return nil }
            return AuditEvent(
                type: type,
                occurredAt: .minimum,
                userId: user,
                deviceId: device,
                attributes: event["attributes"]?.objectValue ?? [:],
                idempotencyKey: event["idempotencyKey"]?.stringValue ?? ""
            )
        }
    }

    /// Whether `auditctl verify` finds the log at `state` whole.
    static func verifies(_ state: String) async throws -> Bool {
        try await run(product("auditctl"), ["verify", "--state-dir", state]).status == 0
    }
}
