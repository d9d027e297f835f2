import ArgumentParser
import AuditChain
import AuditStore
import AuditSupport
import Foundation

extension KeysCommand {
    /// `auditctl keys export-subject`: one subject's content keys for an investigator, after a signed export record
    /// (docs/FORMAT.md, section 13.9): an erasure later names the export, which it cannot reach.
    struct ExportSubject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-subject",
            abstract: "Write one user's content keys (data key files) and seal a record that they left the device."
        )
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "The user id whose keys are exported.") var user: String
        @Option(name: .long, help: "Why, and for whom; sealed in the record.") var reason: String
        @Option(name: .long, help: "A directory to create (0700) for the key files (0600), one per data key.")
        var out: String

        func run() async throws {
            let log = try global.openLog()
            guard !FileManager.default.fileExists(atPath: out) else { throw CLIError("\(out) exists already") }
            guard mkdir(out, 0o700) == 0 else { throw CLIError("cannot create \(out)") }
            let (entry, keys) = try await log.exportSubjectKeys(userId: user, reason: reason)
            for key in keys {
                do {
                    try PrivateFile.create(out + "/data-\(key.id.hex).key", bytes: key.rawRepresentation)
                } catch {
                    throw CLIError("cannot write a key file in \(out): \(error)")
                }
            }
            print(
                "\(keys.count) keys written to \(out) (give them with --data-key); the export record is at seq "
                    + "\(entry.header.seq)"
            )
        }
    }
}
