import ArgumentParser
import AuditChain
import BiometricUnlock
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
            terminal (and without --json), standard error shows the progress: sessions done, rate and ETA.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "Simulated users, one device each (1...10000).") var users = 3
    @Option(name: .long, help: "Sessions per user (1...100000).") var sessions = 20
    @Option(name: .long, help: "The seed (0...2^53-1); the same seed gives the same events.") var seed: UInt64 = 1

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
        let sink = LogAuditSink(log: try global.openLog())
        // Rate and ETA on a terminal's standard error (ProgressReporter).
        let progress = ProgressAuditSink(sink, users: users, sessionsPerUser: sessions, json: output.json)
        let summary = await UnlockSimulator(users: users, sessionsPerUser: sessions, seed: seed).run(into: progress)
        await progress.finish()
        var failure: (any Error)?
        do {
            try await sink.flush()
        } catch {
            failure = error
        }
        let written = await sink.written
        let total = written.values.reduce(0, +)
        if let failure {
            throw CLIError("appending to the log failed after \(total) events were written: \(failure)")
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

    private static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
