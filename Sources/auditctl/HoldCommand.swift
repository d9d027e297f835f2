import ArgumentParser
import AuditChain
import AuditStore
import Foundation

/// `auditctl hold set|clear`: legal holds, each a signed record; no erasure while one is in force (docs/FORMAT.md,
/// section 13.9).
struct HoldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold",
        abstract: "Set or clear a legal hold: erasures are refused while one is in force.",
        subcommands: [Set.self, Clear.self, Show.self]
    )

    /// `auditctl hold set --reason TEXT`.
    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Seal a hold record; refused (exit 2) when a hold is in force already."
        )
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "Why (the matter, the obligation); sealed in the record.") var reason: String

        func run() async throws {
            let log = try global.openLog()
            try await log.endEpochIfDue()
            let entry = try await log.setHold(reason: reason)
            print("legal hold set at seq \(entry.header.seq): erasures are refused until it is cleared")
        }
    }

    /// `auditctl hold clear --reason TEXT`.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Seal a record clearing the hold in force; refused (exit 2) when none is."
        )
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "Why the hold ends; sealed in the record.") var reason: String

        func run() async throws {
            let log = try global.openLog()
            try await log.endEpochIfDue()
            let entry = try await log.clearHold(reason: reason)
            print("legal hold cleared at seq \(entry.header.seq)")
        }
    }

    /// `auditctl hold show`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Say whether a hold is in force."
        )
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let (storage, keys) = try global.state.openStorage()
            let log = try AuditLog(storage: storage, keys: keys)
            if let seq = try log.activeHold() {
                print("a legal hold is in force: set at seq \(seq)")
            } else {
                print("no legal hold is in force")
            }
        }
    }
}
