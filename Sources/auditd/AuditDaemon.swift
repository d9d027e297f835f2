import ArgumentParser
import AuditChain
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `auditd`: the audit agent (`run`, the default), the reference collector (`collector`), a witness (`witness`) and
/// the fprintd watcher (`fprintd`).
///
/// Exit codes: 0 ok (including a graceful shutdown on SIGTERM/SIGINT), 1 failed while running, 2 could not run
/// (usage, bad configuration, unsafe key or token file, cannot bind).
@main
struct AuditDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auditd",
        abstract: "The audit agent: ingest, seal, store and deliver audit events.",
        discussion: """
            Without a subcommand, runs the agent (`auditd run`): `auditd --state-dir DIR ...` is `auditd run \
            --state-dir DIR ...`. This page lists the subcommands only; every setting is on its subcommand's page:
              auditd run --help         every setting of the agent
              auditd collector --help   every setting of the reference collector
              auditd witness --help     every setting of the witness
              auditd fprintd --help     every setting of the fprintd watcher
            Exit codes: 0 ok, 1 failed while running, 2 could not run (usage, configuration, unsafe key or token \
            file, cannot bind).
            """,
        version: PackageVersion.current,
        subcommands: [RunCommand.self, CollectorCommand.self, WitnessCommand.self, FprintdCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Parses and runs; usage errors exit 2 like every other failure to start (as `auditctl` does).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Glibc.exit(code.rawValue)
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            FileHandle.standardError.write(Data("auditd: \(fullMessage(for: error))\n".utf8))
            Glibc.exit(2)
        }
    }
}
