import ArgumentParser
import AuditChain
import AuditStore

/// `auditctl dlq list | replay | purge`.
struct DLQCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "The dead-letter queue: entries the backend refused or that ran out of retries.",
        subcommands: [DLQListCommand.self, DLQReplayCommand.self, DLQPurgeCommand.self]
    )
}

/// `auditctl dlq list [--json]`.
struct DLQListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List DLQ entries.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let items = try global.openLog().deadLetters()
        if output.json {
            printJSON(
                .array(
                    items.map { item in
                        .object([
                            "seq": .integer(Int64(item.seq)), "reason": .string(item.reason),
                            "detail": .string(item.detail), "attempts": .integer(Int64(item.attempts)),
                            "priority": .string(item.priority.name),
                            "since": .string(AuditTimestamp(millisecondsSinceEpoch: item.changedAt).rfc3339),
                        ])
                    }
                )
            )
            return
        }
        if items.isEmpty { print("the DLQ is empty") }
        for item in items {
            let since = AuditTimestamp(millisecondsSinceEpoch: item.changedAt).rfc3339
            print("seq \(item.seq) \(item.reason) since \(since) attempts \(item.attempts): \(item.detail)")
        }
    }
}

/// Selects DLQ entries by sequence number, or all.
struct DLQSelection: ParsableArguments {
    @Option(name: .long, help: "A DLQ entry's sequence number (repeatable).")
    var seq: [UInt64] = []

    @Flag(name: .long, help: "Every DLQ entry.")
    var all = false

    func validate() throws {
        guard all != !seq.isEmpty else { throw ValidationError("name entries with --seq, or pass --all") }
    }

    var seqs: Set<UInt64>? { all ? nil : Set(seq) }
}

/// `auditctl dlq replay (--seq N ... | --all)`.
struct DLQReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Move DLQ entries back to pending, attempts reset; the agent sends them at its next cycle."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: DLQSelection

    func run() async throws {
        let log = try global.openLog()
        try checkInDLQ(log, selection.seqs)
        let moved = try await log.replayDeadLetters(selection.seqs)
        print("moved \(moved.count) entr\(moved.count == 1 ? "y" : "ies") back to pending")
    }
}

/// `auditctl dlq purge (--seq N ... | --all) --reason TEXT`.
struct DLQPurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Remove DLQ entries from delivery; an accounted-removal record (reason purged) says so."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: DLQSelection

    @Option(name: .long, help: "Why (carried by the removal record).")
    var reason: String

    func run() async throws {
        let log = try global.openLog()
        try checkInDLQ(log, selection.seqs)
        let (purged, records) = try await log.purgeDeadLetters(selection.seqs, detail: reason)
        let recordSeqs = records.map { String($0.header.seq) }.joined(separator: ", ")
        print("purged \(purged.count) entr\(purged.count == 1 ? "y" : "ies"); removal record(s) at seq \(recordSeqs)")
    }
}

/// Fails, before anything is changed, when named entries are not in the DLQ.
private func checkInDLQ(_ log: AuditLog, _ asked: Set<UInt64>?) throws {
    guard let asked else { return }
    let missing = asked.subtracting(try log.deadLetters().map(\.seq)).sorted()
    guard missing.isEmpty else {
        throw CLIError("not in the DLQ: seq \(missing.map(String.init).joined(separator: ", "))")
    }
}
