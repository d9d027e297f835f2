import ArgumentParser
import AuditChain
import Foundation
import AuditStore

/// `auditctl emit`: validate and append events (all or nothing).
struct EmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emit",
        abstract: "Append events: from flags, or from a JSON object / JSON Lines file (all or nothing).",
        discussion: """
            --attr key=value takes a JSON value when the value parses as JSON (2, true, "text"), else a string.
            --input FILE (- for stdin) takes one object or JSON Lines (told apart by their content), each {"type", \
            "userId", "deviceId", "attributes", optional "occurredAt" (RFC 3339) and "idempotencyKey"}.
            --json prints what was appended as JSON, like every other command's --json. The old spelling \
            `emit --json FILE`, where --json named the input, still works with a deprecation warning and text output.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .long, help: "Event type.") var type: String?
    @Option(name: .long, help: "User id.") var user: String?
    @Option(name: .long, help: "Device id.") var device: String?
    @Option(name: .customLong("attr"), help: "An attribute, key=value (repeatable).") var attributes: [String] = []
    @Option(name: .customLong("input"), help: "Read events from FILE (- for stdin): a JSON object or JSON Lines.")
    var inputFile: String?
    /// The FILE of the deprecated `--json FILE`.
    @Argument(help: .hidden) var legacyInputFile: String?

    func run() async throws {
        let catalogue = try global.loadCatalogue()
        let (inputFile, json) = try resolveInput()
        let events: [ProducerEvent]
        if let inputFile {
            guard type == nil, user == nil, device == nil, attributes.isEmpty else {
                throw CLIError("use either --input FILE or --type/--user/--device/--attr, not both")
            }
            // An event without `occurredAt` is stamped now; its retry is compared apart from the stamps.
            events = try AuditEvent.decodeProducerInput(
                try readInput(inputFile),
                catalogue: catalogue,
                now: .now(),
                makeIdempotencyKey: { UUID().uuidString.lowercased() }
            )
        } else {
            events = [ProducerEvent(try eventFromFlags(catalogue), occurredAtStamped: true)]
        }
        let log = try global.openLog()
        let receipts = try await log.append(events)
        // Format version 2: an epoch past its scheduled end ends now (the agent ends it on time when it runs).
        try await log.endEpochIfDue()
        if json {
            printJSON(
                .object([
                    "entries": .array(
                        receipts.map {
                            .object([
                                "seq": .integer(Int64($0.seq)), "entryHash": .string(Hex.encode($0.entryHash)),
                                "duplicate": .bool($0.isDuplicate),
                            ])
                        }
                    )
                ])
            )
            return
        }
        for receipt in receipts {
            // A retry of an event the log holds names the original entry; nothing was written for it.
            let what = receipt.isDuplicate ? "already appended" : "appended"
            print("\(what) seq \(receipt.seq) \(Hex.encode(receipt.entryHash))")
        }
    }

    /// The input file and whether to print JSON, from `--input FILE` and `--json`, or the deprecated `--json FILE`
    /// (input, text output).
    private func resolveInput() throws -> (file: String?, json: Bool) {
        guard let legacyInputFile else { return (inputFile, output.json) }
        guard output.json, inputFile == nil else {
            throw CLIError("unexpected argument \(legacyInputFile) (read events with --input FILE)")
        }
        FileHandle.standardError.write(
            Data(
                "auditctl: warning: `emit --json FILE` is deprecated, use `emit --input FILE` (--json means JSON output)\n"
                    .utf8
            )
        )
        return (legacyInputFile, false)
    }

    private func eventFromFlags(_ catalogue: EventCatalogue) throws -> AuditEvent {
        guard let type, let user, let device else {
            throw CLIError("emit needs --type, --user and --device (or --input FILE)")
        }
        var members: [String: JSONValue] = [:]
        for attribute in attributes {
            guard let equals = attribute.firstIndex(of: "="), equals != attribute.startIndex else {
                throw CLIError("--attr \(attribute): expected key=value")
            }
            let key = String(attribute[..<equals])
            let text = String(attribute[attribute.index(after: equals)...])
            guard members[key] == nil else { throw CLIError("--attr \(key) is given twice") }
            members[key] = (try? JSONValue(parsing: Array(text.utf8))) ?? .string(text)
        }
        let event = AuditEvent(
            type: type,
            occurredAt: .now(),
            userId: user,
            deviceId: device,
            attributes: members,
            idempotencyKey: UUID().uuidString.lowercased()
        )
        try catalogue.validate(event)
        return event
    }
}
