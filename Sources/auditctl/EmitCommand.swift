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
            --json FILE (- for stdin) takes one object or JSON Lines, each {"type", "userId", "deviceId",
            "attributes", optional "occurredAt" (RFC 3339) and "idempotencyKey"}.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Event type.") var type: String?
    @Option(name: .long, help: "User id.") var user: String?
    @Option(name: .long, help: "Device id.") var device: String?
    @Option(name: .customLong("attr"), help: "An attribute, key=value (repeatable).") var attributes: [String] = []
    @Option(name: .customLong("json"), help: "Read events from FILE (- for stdin).") var jsonFile: String?

    func run() async throws {
        let catalogue = try global.loadCatalogue()
        let events: [AuditEvent]
        if let jsonFile {
            guard type == nil, user == nil, device == nil, attributes.isEmpty else {
                throw CLIError("use either --json FILE or --type/--user/--device/--attr, not both")
            }
            events = try AuditEvent.decodeInput(
                try readInput(jsonFile),
                catalogue: catalogue,
                now: .now(),
                makeIdempotencyKey: { UUID().uuidString.lowercased() }
            )
        } else {
            guard let type, let user, let device else {
                throw CLIError("emit needs --type, --user and --device (or --json FILE)")
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
            events = [event]
        }
        let receipts = try await global.openLog().append(events)
        for receipt in receipts {
            // A retry of an event the log holds names the original entry; nothing was written for it.
            let what = receipt.isDuplicate ? "already appended" : "appended"
            print("\(what) seq \(receipt.seq) \(Hex.encode(receipt.entryHash))")
        }
    }
}
