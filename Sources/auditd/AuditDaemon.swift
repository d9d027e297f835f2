import ArgumentParser

@main
struct AuditDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auditd",
        abstract: "The audit agent: ingest, seal, store and deliver audit events."
    )

    mutating func run() async throws {
        throw ValidationError("auditd is not implemented yet")
    }
}
