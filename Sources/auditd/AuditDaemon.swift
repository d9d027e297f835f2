import ArgumentParser
import Foundation

/// The audit agent. Its ingest API, delivery queue, sync loop and collector role are not built yet (issue 4);
/// until then it says so instead of pretending to run.
@main
struct AuditDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auditd",
        abstract: "The audit agent: ingest, seal, store and deliver audit events (not built yet)."
    )

    mutating func run() async throws {
        FileHandle.standardError.write(
            Data(
                ("auditd: the agent (ingest API, delivery queue, sync, collector) is not implemented yet; "
                    + "use auditctl to write, inspect and verify the log\n").utf8
            )
        )
        throw ExitCode(2)
    }
}
