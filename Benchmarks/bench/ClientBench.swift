import AuditAgent
import AuditChain
import AuditClient
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The `client` section: events per second through AuditClient into a running agent (this executable as a child
/// process, `bench agent-child STATE`), one producer and 16 concurrent ones, as a ratio to `auditctl emit --input`
/// of the same events into a fresh state directory in one process (one commit), measured in the same run.
enum ClientBench {
    /// `bench agent-child STATE-DIRECTORY`: an agent on `<state>/ingest.sock`, no backend, until SIGTERM.
    static func agentChild(_ arguments: [String]) async throws {
        guard let state = arguments.first else { throw BenchError("agent-child needs a state directory") }
        var configuration = AgentConfiguration()
        configuration.stateDirectory = state
        configuration.logLevel = .error
        var logger = Logger(label: "bench-agent")
        logger.logLevel = .error
        let agent = try await Agent(configuration: configuration, logger: logger)
        try await agent.runUntilSignalled()
    }

    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let count = options.quick ? 2000 : 10_000
        let events = (0..<count).map(Self.event)
        // The reference: `auditctl emit --input FILE` of the same events, one process, one commit.
        let auditctl = URL(fileURLWithPath: ChildProcess.executablePath).deletingLastPathComponent().path + "/auditctl"
        guard FileManager.default.isExecutableFile(atPath: auditctl) else {
            Summary.say(
                "skipped: the client section needs auditctl beside bench (swift build -c release --product auditctl, "
                    + "with the same --scratch-path as bench)"
            )
            return
        }
        let input = try directory.subdirectory("client-input") + "/events.jsonl"
        var lines: [UInt8] = []
        for event in events {
            lines += Self.input(event).canonicalBytes
            lines.append(UInt8(ascii: "\n"))
        }
        try Data(lines).write(to: URL(fileURLWithPath: input))
        let emitState = try directory.subdirectory("client-emit")
        try Self.execute(auditctl, ["init", "--state-dir", emitState])
        let emitSeconds = try Timing.measure {
            try Self.execute(auditctl, ["emit", "--state-dir", emitState, "--input", input])
        }
        let emitRate = Double(count) / emitSeconds
        Summary.say("auditctl emit --input: \(count) events in one process: \(Timing.rate(emitRate))")

        // The agent, a child process; each figure gets a fresh one.
        // (producers, events per send, whether each producer has a client of its own, as separate applications
        // would: its own connections and buffer, rather than tasks sharing one client actor)
        for (producers, batch, ownClients) in [(1, 1, false), (16, 1, false), (16, 1, true), (1, 256, false)] {
            let state = try directory.subdirectory("client-agent-\(producers)-\(batch)\(ownClients ? "-own" : "")")
            let agent = try Self.startAgent(state)
            defer {
                kill(agent.processIdentifier, SIGTERM)
                agent.waitUntilExit()
            }
            var configuration = AuditClientConfiguration(socketPath: state + "/ingest.sock")
            configuration.capacity = count
            let client = try AuditClient(configuration: configuration)
            try await Self.waitForAgent(client)
            let clients = try (0..<producers).map { _ in
                ownClients ? try AuditClient(configuration: configuration) : client
            }
            let slices = (0..<producers).map { producer in
                stride(from: producer, to: count, by: producers).map { events[$0] }
            }
            let seconds = try await Timing.measureAsync {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (slice, client) in zip(slices, clients) {
                        group.addTask {
                            var start = 0
                            while start < slice.count {
                                let end = min(slice.count, start + batch)
                                _ = try await client.send(Array(slice[start..<end]))
                                start = end
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let rate = Double(count) / seconds
            let name =
                "AuditClient → auditd, \(producers) producer\(producers == 1 ? "" : "s"), "
                + (batch == 1 ? "one event per send" : "\(batch) events per send")
                + (ownClients ? ", a client each" : producers > 1 ? ", one client shared" : "")
            Summary.say("\(name): \(Timing.rate(rate)) (ratio to emit \(String(format: "%.2f", rate / emitRate)))")
            summary.add(Figure(name: name, value: rate, unit: .rate, reference: emitRate, referenceName: "emit"))
        }
    }

    /// The `index`-th event: one in four critical, the others routine.
    static func event(_ index: Int) -> AuditEvent {
        let failure = index % 4 == 0
        let attributes: [String: JSONValue] =
            failure
            ? ["attemptCount": .integer(1), "errorCode": .string("ERR-107-030")]
            : ["unlockDurationMs": .integer(Int64(index % 900))]
        return AuditEvent(
            type: failure ? "BIOMETRIC_AUTH_FAILURE" : "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(index)),
            userId: "user-\(index % 100)",
            deviceId: "device-\(index % 100)",
            attributes: attributes,
            idempotencyKey: "bench-\(index)"
        )
    }

    /// An event as producer input (the ingest API's and `auditctl emit --input`'s JSON).
    static func input(_ event: AuditEvent) -> JSONValue {
        .object([
            "type": .string(event.type), "occurredAt": .string(event.occurredAt.rfc3339),
            "userId": .string(event.userId), "deviceId": .string(event.deviceId),
            "attributes": .object(event.attributes), "idempotencyKey": .string(event.idempotencyKey),
        ])
    }

    /// Runs a program to completion; throws unless it exits 0.
    static func execute(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw BenchError("\(path) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus))")
        }
    }

    static func startAgent(_ state: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ChildProcess.executablePath)
        process.arguments = ["agent-child", state]
        try process.run()
        return process
    }

    /// Waits (at most 60 s) until the agent answers.
    static func waitForAgent(_ client: AuditClient) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                try await client.checkAgent()
                return
            } catch {
                guard ContinuousClock.now < deadline else { throw BenchError("the agent did not start: \(error)") }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
