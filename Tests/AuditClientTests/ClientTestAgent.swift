import AuditAgent
import AuditChain
import AuditServerKit
import AuditStore
import Foundation
import Logging
import TestKit

/// A short temporary directory (unix socket paths are limited to ~100 bytes), removed when released.
typealias ClientTempDir = ShortTemporaryDirectory

extension ShortTemporaryDirectory {
    /// `/tmp/client-<8 hex digits>`.
    convenience init() throws { try self.init(prefix: "client") }
}

/// Real agents, in-process, on a unix socket, for the client to talk to.
enum ClientTestAgent {
    /// An agent on `<dir>/state` with its unix socket only (no TCP, no metrics, no backend).
    static func configuration(_ dir: ClientTempDir) -> AgentConfiguration {
        var configuration = AgentConfiguration()
        configuration.stateDirectory = dir.file("state")
        configuration.syncInterval = .milliseconds(200)
        configuration.shutdownTimeout = .seconds(5)
        // In-process: never end the test process on a slow cancellation.
        configuration.cancellationTimeout = nil
        return configuration
    }

    /// The socket the agent of `dir` listens on.
    static func socket(_ dir: ClientTempDir) -> String { dir.file("state") + "/ingest.sock" }

    /// Runs an agent for the duration of `body`, then shuts it down gracefully and waits for it to stop.
    @discardableResult
    static func withAgent<T: Sendable>(
        _ configuration: AgentConfiguration,
        _ body: (Agent) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "auditd-client-test") { label in
            StructuredLogHandler(label: label, level: .notice) { line in
                if ProcessInfo.processInfo.environment["AGENT_TEST_LOG"] != nil {
                    StructuredLogHandler.standardError(line)
                }
            }
        }
        let agent = try await Agent(configuration: configuration, logger: logger)
        let task = Task { try await agent.run() }
        do {
            _ = try await agent.waitUntilListening(timeout: .seconds(90))
            let result = try await body(agent)
            await agent.shutdown()
            try await task.value
            return result
        } catch {
            await agent.shutdown()
            try? await task.value
            throw error
        }
    }

    /// The decrypted events of a log, in seq order.
    static func events(_ log: AuditLog) throws -> [(seq: UInt64, event: AuditEvent)] {
        let keys = try log.keys.dataKeysById()
        var found: [(seq: UInt64, event: AuditEvent)] = []
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            guard entry.header.kind == .event, let key = keys[entry.header.dataKeyId] else { return true }
            found.append((stored.seq, try AuditEvent(canonicalPayload: entry.openPayload(with: key))))
            return true
        }
        return found.sorted { $0.seq < $1.seq }
    }

    /// A routine event (`BIOMETRIC_AUTH_SUCCESS`) with key `key`.
    static func routine(_ key: String, user: String = "alice", at millis: Int64 = 1_795_000_000_000) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: millis),
            userId: user,
            deviceId: "phone-1",
            attributes: ["unlockDurationMs": 412],
            idempotencyKey: key
        )
    }

    /// A critical event (`BIOMETRIC_AUTH_FAILURE`) with key `key`.
    static func critical(_ key: String, at millis: Int64 = 1_795_000_000_000) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_FAILURE",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: millis),
            userId: "bob",
            deviceId: "phone-1",
            attributes: ["attemptCount": 1, "errorCode": "ERR-107-030"],
            idempotencyKey: key
        )
    }
}
