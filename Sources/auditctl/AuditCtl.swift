import ArgumentParser
import AuditChain
import Foundation

/// `auditctl`: inspect, manage and verify the audit log.
///
/// Exit codes: 0 ok, 1 verification found problems, 2 could not run (usage, I/O, missing or unsafe key,
/// invalid input).
struct AuditCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auditctl",
        abstract: "Inspect, manage and verify the audit log.",
        discussion: """
            The options every command takes (--state-dir, --catalogue) may come before the subcommand too: \
            `auditctl --state-dir DIR simulate` is `auditctl simulate --state-dir DIR`. `--json` always means JSON \
            output (emit reads its input with --input FILE). Exit codes: 0 ok, 1 verification found problems, \
            2 could not run.
            """,
        version: PackageVersion.current,
        subcommands: [
            InitCommand.self, EmitCommand.self, CatalogueCommand.self, LogCommand.self, ShowCommand.self,
            VerifyCommand.self,
            ExportCommand.self, CheckpointCommand.self, StatsCommand.self, KeysCommand.self,
            SimulateCommand.self, QueueCommand.self, DLQCommand.self, ProveCommand.self, VerifyProofCommand.self,
            VerifyConsistencyCommand.self, PamCommand.self, EraseCommand.self, HoldCommand.self,
        ]
    )
}

@main
enum AuditCtlMain {
    static func main() async {
        do {
            let arguments = GlobalOptions.movingLeadingOptions(Array(CommandLine.arguments.dropFirst()))
            var command = try AuditCtl.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = Self.report(error)
            // `auditctl pam` runs in PAM stacks: even a usage error must not fail a login (docs/PRODUCERS.md).
            exit(CommandLine.arguments.dropFirst().first == "pam" ? 0 : code)
        }
    }

    /// Prints the error and returns the exit code: help and `ExitCode` as they are, evidence that does not hold
    /// (``ProofRefusal``) 1, everything else 2.
    static func report(_ error: any Error) -> Int32 {
        if let exitCode = error as? ExitCode { return exitCode.rawValue }
        if let refusal = error as? ProofRefusal {
            FileHandle.standardError.write(Data("auditctl: \(refusal.message)\n".utf8))
            return 1
        }
        if AuditCtl.exitCode(for: error) == .success {
            print(AuditCtl.fullMessage(for: error))
            return 0
        }
        FileHandle.standardError.write(Data("auditctl: \(AuditCtl.fullMessage(for: error))\n".utf8))
        return 2
    }
}
