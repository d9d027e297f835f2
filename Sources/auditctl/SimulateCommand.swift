import ArgumentParser
import AuditChain
import AuditClient
import BiometricUnlock
import BiometricUnlockClient
import Foundation
import UnlockSimulation

/// `auditctl simulate`: append the events of seeded, simulated biometric unlock sessions.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Append the events of simulated biometric unlock sessions (for demos and benchmarks).",
        discussion: """
            Drives the biometric unlock controller through realistic sessions of USERS users (user-1 ..., one \
            device each) and appends every event to the log, in order, in batches of 256 (one commit each). \
            The same seed gives the same events (their occurredAt and idempotency keys included); the entries' \
            sealing times, nonces and hashes differ. Reports how many events of each type were written. On a \
            terminal (and without --json), standard error shows the progress: sessions done, rate and ETA. \
            With --agent SOCKET (or --agent-url http://127.0.0.1:PORT) the events go through AuditClient to a \
            running agent instead of the local log, in requests of 256 (exit 2 when the agent does not answer at \
            start).
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "Simulated users, one device each (1...10000).") var users = 3
    @Option(name: .long, help: "Sessions per user (1...100000).") var sessions = 20
    @Option(name: .long, help: "The seed (0...2^53-1); the same seed gives the same events.") var seed: UInt64 = 1
    @Option(name: .long, help: "Send the events to the agent listening on this unix socket.") var agent: String?
    @Option(name: .long, help: "Send the events to the agent's loopback TCP ingest (http://127.0.0.1:PORT).")
    var agentURL: String?

    static let userRange = 1...10_000
    static let sessionRange = 1...100_000

    func run() async throws {
        guard Self.userRange.contains(users) else {
            throw CLIError("--users must be between 1 and 10000 (got \(users))")
        }
        guard Self.sessionRange.contains(sessions) else {
            throw CLIError("--sessions must be between 1 and 100000 (got \(sessions))")
        }
        guard seed <= UInt64(JSONValue.maxSafeInteger) else {
            throw CLIError("--seed must be at most \(JSONValue.maxSafeInteger) (got \(seed))")
        }
        let target = try agentEndpoint()
        let written: [String: Int]
        let failure: (any Error)?
        let summary: UnlockSimulationSummary
        if let target {
            (summary, written, failure) = try await simulateIntoAgent(target)
        } else {
            let sink = LogAuditSink(log: try global.openLog())
            (summary, failure) = await simulate(into: sink) { try await sink.flush() }
            written = await sink.written
        }
        let total = written.values.reduce(0, +)
        if let failure {
            let into = target == nil ? "appending to the log" : "sending to the agent"
            throw CLIError("\(into) failed after \(total) events were written: \(failure)")
        }
        guard summary.isComplete else {
            let first = summary.auditFailures.first.map { ": \($0)" } ?? ""
            throw CLIError(
                "the simulation stopped: \(summary.undeliveredEvents) event(s) were not written and "
                    + "\(summary.auditFailures.count) audit failure(s) were reported\(first); \(total) were written"
            )
        }
        if output.json {
            printJSON(
                .object([
                    "seed": .integer(Int64(seed)), "users": .integer(Int64(users)),
                    "sessions": .integer(Int64(sessions)),
                    "events": .object(written.mapValues { .integer(Int64($0)) }), "total": .integer(Int64(total)),
                    "unlocks": .object([
                        "biometric": .integer(Int64(summary.biometricUnlocks)),
                        "password": .integer(Int64(summary.passwordUnlocks)),
                    ]),
                ])
            )
        } else {
            print(
                "simulated \(summary.sessions) sessions of \(users) users (seed \(seed)): "
                    + "\(summary.biometricUnlocks) biometric and \(summary.passwordUnlocks) password unlocks"
            )
            let width = max(5, written.keys.map(\.count).max() ?? 0)
            for (type, count) in written.sorted(by: { $0.key < $1.key }) {
                print(Self.padded(type, width) + "  \(count)")
            }
            print(Self.padded("total", width) + "  \(total)")
        }
    }

    /// The agent to send to, from --agent or --agent-url; nil for the local log.
    private func agentEndpoint() throws -> AuditClientConfiguration.Endpoint? {
        switch (agent, agentURL) {
        case (nil, nil):
            return nil
        case (let socket?, nil):
            return .unixSocket(socket)
        case (nil, let text?):
            guard let url = URL(string: text), url.scheme == "http", let host = url.host, let port = url.port,
                url.path.isEmpty || url.path == "/"
            else { throw CLIError("--agent-url must be http://127.0.0.1:PORT or http://[::1]:PORT (got \(text))") }
            return .loopback(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
        case (.some, .some):
            throw CLIError("give either --agent or --agent-url, not both")
        }
    }

    /// Runs the simulation into an agent through AuditClient; exit 2 when the agent does not answer at start.
    private func simulateIntoAgent(
        _ endpoint: AuditClientConfiguration.Endpoint
    ) async throws -> (UnlockSimulationSummary, [String: Int], (any Error)?) {
        var configuration = AuditClientConfiguration(endpoint: endpoint)
        // Room for a whole batch and the controller's re-offers; nothing is dropped while the agent answers.
        configuration.capacity = 4096
        let client: AuditClient
        do {
            client = try AuditClient(configuration: configuration)
        } catch {
            throw CLIError("\(error)")
        }
        do {
            try await client.checkAgent()
        } catch {
            FileHandle.standardError.write(Data("auditctl: no agent answers at \(endpoint): \(error)\n".utf8))
            throw ExitCode(2)
        }
        let sink = ClientAuditSink(client: client, batchSize: 256)
        let (summary, failure) = await simulate(into: sink) { try await sink.flush() }
        return (summary, await sink.written, failure)
    }

    /// Runs the sessions into `sink` with the progress line, then `flush`es; returns the summary and the flush's
    /// failure.
    private func simulate(
        into sink: any AuditSink,
        flush: () async throws -> Void
    ) async -> (UnlockSimulationSummary, (any Error)?) {
        // Rate and ETA on a terminal's standard error (ProgressReporter).
        let progress = ProgressAuditSink(sink, users: users, sessionsPerUser: sessions, json: output.json)
        let summary = await UnlockSimulator(users: users, sessionsPerUser: sessions, seed: seed).run(into: progress)
        await progress.finish()
        do {
            try await flush()
        } catch {
            return (summary, error)
        }
        return (summary, nil)
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
