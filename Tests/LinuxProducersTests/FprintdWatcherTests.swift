import AuditChain
import Foundation
import TestKit
import Testing

/// `auditd fprintd` against the real fprintd on a private bus (``FprintdBus``), the agent sealing what it sends.
@Suite(
    "auditd fprintd with the real fprintd and its virtual reader",
    .enabled(if: ProducerHarness.mustRun(FprintdBus.programs)),
    .serialized
)
struct FprintdWatcherTests {
    @Test("enroll, verify-match, verify-no-match after a retry, fprintd killed and restarted, delete: four events")
    func fingerprintLifecycle() async throws {
        let bus = try await FprintdBus()
        defer { bus.end() }
        let state = bus.directory.file("agent")
        let agent = try await ProducerHarness.startAgent(state, output: bus.directory.file("agent.log"))
        defer { agent.end() }
        try await bus.startFprintd()
        let (watcher, health) = try await Self.startWatcher(bus, agentState: state)
        defer { watcher.end() }

        let enrolled = try await bus.enroll("right-index-finger", for: "root")
        try #require(enrolled, "\(bus.output("enroll-right-index-finger"))")

        let match = try bus.client("fprintd-verify", ["-f", "right-index-finger", "root"], name: "verify-match")
        try #require(await bus.waitFor("Verifying: right-index-finger", in: match), "\(match.output)")
        try #require(await ProducerHarness.eventually { bus.reader("SCAN right-index-finger") })
        #expect(await match.wait(timeout: .seconds(60)).status == 0)
        #expect(match.output.contains("verify-match"))

        let noMatch = try bus.client("fprintd-verify", ["-f", "right-index-finger", "root"], name: "verify-no-match")
        try #require(await bus.waitFor("Verifying: right-index-finger", in: noMatch), "\(noMatch.output)")
        try #require(await ProducerHarness.eventually { bus.reader("RETRY 0") })
        try #require(await bus.waitFor("verify-retry-scan", in: noMatch), "\(noMatch.output)")
        try #require(await ProducerHarness.eventually { bus.reader("SCAN another-finger") })
        _ = await noMatch.wait(timeout: .seconds(60))
        #expect(noMatch.output.contains("verify-no-match"))

        // fprintd crashes and comes back: the watcher follows its new name.
        bus.killFprintd()
        try await bus.startFprintd()
        let followed = await ProducerHarness.eventually {
            (health()["fprintdStarts"]?.integerValue ?? 0) >= 1 && health()["fprintd"] == "running"
        }
        #expect(followed, "\(watcher.output)")

        let delete = try bus.client("fprintd-delete", ["root"], name: "delete")
        #expect(await delete.wait(timeout: .seconds(60)).status == 0, "\(delete.output)")

        let sealed = try await ProducerHarness.eventually { try await ProducerHarness.events(state).count >= 4 }
        #expect(sealed, "\(watcher.output)")
        let events = try await ProducerHarness.events(state)
        #expect(
            events.map(\.type) == [
                "BIOMETRIC_ENABLED", "BIOMETRIC_AUTH_SUCCESS", "BIOMETRIC_AUTH_FAILURE", "BIOMETRIC_DISABLED",
            ]
        )
        #expect(events.allSatisfy { $0.userId == "root" && $0.deviceId == "test/Device/0" })
        #expect(events.first?.attributes == ["biometryType": "fingerprint", "finger": "right-index-finger"])
        #expect(events.dropFirst(2).first?.attributes["attemptCount"] == 2)
        #expect(events.dropFirst(2).first?.attributes["errorCode"] == "ERR-107-030")
        #expect(try await ProducerHarness.verifies(state))

        #expect(await ProducerHarness.stop(watcher).status == 0)
        await ProducerHarness.stop(agent)
    }

    @Test("the bus going away and coming back: the watcher says so, reconnects, and seals what follows")
    func busRestart() async throws {
        let bus = try await FprintdBus()
        defer { bus.end() }
        let state = bus.directory.file("agent")
        let agent = try await ProducerHarness.startAgent(state, output: bus.directory.file("agent.log"))
        defer { agent.end() }
        try await bus.startFprintd()
        let (watcher, health) = try await Self.startWatcher(bus, agentState: state)
        defer { watcher.end() }
        bus.killBus()
        let lost = await ProducerHarness.eventually {
            health()["bus"] == "lost" && health()["fprintd"] == "not running" && health()["lastError"] != nil
        }
        #expect(lost, "\(watcher.output)")
        try await bus.startBus()
        try await bus.startFprintd()
        let back = try await ProducerHarness.eventually {
            _ = try await bus.busctl(["list"])
            return health()["bus"] == "watching" && health()["fprintd"] == "running"
                && (health()["busReconnects"]?.integerValue ?? 0) >= 1
        }
        #expect(back, "\(watcher.output)")
        let enrolled = try await bus.enroll("left-thumb", for: "root")
        try #require(enrolled, "\(bus.output("enroll-left-thumb"))")
        let sealed = try await ProducerHarness.eventually { try await ProducerHarness.events(state).count >= 1 }
        #expect(sealed, "\(watcher.output)")
        let events = try await ProducerHarness.events(state)
        #expect(events.map(\.type) == ["BIOMETRIC_ENABLED"])
        #expect(events.first?.attributes["finger"] == "left-thumb")
        #expect(watcher.output.contains("fprintd left the bus") || watcher.output.contains("not on the bus"))
        #expect(await ProducerHarness.stop(watcher).status == 0)
        await ProducerHarness.stop(agent)
    }

    /// Starts `auditd fprintd` on `bus` for the agent at `agentState`, and waits until it watches the bus and knows
    /// fprintd (when it runs); returns it with a reader of its status file.
    static func startWatcher(
        _ bus: FprintdBus,
        agentState: String,
        fprintdRunning: Bool = true
    ) async throws -> (ChildProcess.Running, @Sendable () -> [String: JSONValue]) {
        let status = bus.directory.file("status.json")
        let watcher = try ChildProcess.start(
            ProducerHarness.product("auditd"),
            [
                "fprintd", "--socket", agentState + "/ingest.sock", "--bus", bus.address, "--status-file", status,
                "--device-id-prefix", "test/",
            ],
            environment: ProducerHarness.environment,
            outputPath: bus.directory.file("watcher.log")
        )
        let health: @Sendable () -> [String: JSONValue] = {
            let bytes = FileManager.default.contents(atPath: status).map(Array.init) ?? []
            return (try? JSONValue(parsing: bytes))?.objectValue ?? [:]
        }
        // Watching once a message came through (the bus is poked until one does); fprintd known by its owner.
        let watching = try await ProducerHarness.eventually {
            _ = try await bus.busctl(["list"])
            return health()["bus"] == "watching" && (!fprintdRunning || health()["fprintd"] == "running")
        }
        #expect(watching, "\(watcher.output)")
        return (watcher, health)
    }
}
