import ArgumentParser
import AuditChain
import AuditStore
import Foundation

/// `auditctl erase`: destroys every key of one subject and seals the signed erasure record (docs/FORMAT.md,
/// section 13.9). Refused while a legal hold is in force.
struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract: "Erase one user's events: destroy their keys and seal a signed erasure record.",
        discussion: """
            Every event of the user becomes unreadable on this device and in every copy (collector, bundles, \
            backups), without a byte of any entry changing; `verify` reports them as erased under the record, not \
            as damage. The record lists the destroyed key ids and the reason, never the user. Refused (exit 2) \
            while a legal hold is in force. Keys exported before (`keys export-subject`) still open the events: \
            the output names those exports.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .long, help: "The user id whose events are erased.")
    var user: String

    @Option(name: .long, help: "Why (the request's reference, the legal ground); sealed in the record.")
    var reason: String

    @Option(name: .long, help: "The operator's name, sealed in the record (default: none).")
    var requestedBy: String = ""

    @Flag(name: .long, help: "Required: erasure cannot be undone.")
    var confirm = false

    func validate() throws {
        guard confirm else { throw ValidationError("erasure cannot be undone: add --confirm") }
        guard !user.isEmpty else { throw ValidationError("--user must name a user id") }
        guard !reason.isEmpty else { throw ValidationError("--reason must say why") }
    }

    func run() async throws {
        let log = try global.openLog()
        try await log.endEpochIfDue()
        let erasure = try await log.erase(userId: user, reason: reason, requestedBy: requestedBy)
        if output.json {
            printJSON(erasure.json)
            return
        }
        print(
            "erased: \(erasure.entriesErased) entries made unreadable under the erasure record at seq "
                + "\(erasure.recordSeq) (\(erasure.keyIds.count) keys destroyed)"
        )
        if !erasure.exportSeqs.isEmpty {
            print(
                "not reached: keys of this user left the device by the export records at seq "
                    + erasure.exportSeqs.map(String.init).joined(separator: ", ")
                    + "; whoever holds those copies can still open the events"
            )
        }
    }
}
