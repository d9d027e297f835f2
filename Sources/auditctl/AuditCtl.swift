import ArgumentParser

@main
struct AuditCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auditctl",
        abstract: "Inspect, manage and verify the audit log."
    )
}
