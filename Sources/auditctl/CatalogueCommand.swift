import ArgumentParser
import AuditChain

/// `auditctl catalogue`: the event types events are validated against, built in and from `--catalogue FILE`.
struct CatalogueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalogue",
        abstract: "List the event types: priority, attributes (type, required or optional, range), the secret rule.",
        discussion: """
            Lists the built-in types and those a deployment's catalogue file adds (--catalogue FILE, \
            docs/CATALOGUE.md). --json prints one object: "eventTypes" (each type in the catalogue file layout, \
            with "source": "built-in" or "file"), "maxPayloadBytes" and "secretAttributeRule".
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let catalogue = try global.loadCatalogue()
        let types = catalogue.types.values.sorted { $0.name < $1.name }
        if output.json {
            printJSON(Self.json(catalogue, types))
            return
        }
        for type in types {
            let source = EventCatalogue.builtIn.types[type.name] == nil ? ", from \(global.catalogue ?? "file")" : ""
            print("\(type.name)  \(type.priority.rawValue)\(source)")
            if !type.summary.isEmpty { print("  \(type.summary)") }
            let width = type.attributes.keys.map(\.count).max() ?? 0
            for (name, spec) in type.attributes.sorted(by: { $0.key < $1.key }) {
                let padded = name + String(repeating: " ", count: width - name.count)
                print("  \(padded)  \(Self.describe(spec))")
            }
            if type.attributes.isEmpty { print("  (no attributes)") }
            if type.additionalAttributes { print("  (undeclared attributes accepted)") }
        }
        print(
            """

            Canonical payload: at most \(catalogue.maxPayloadBytes) bytes. Secret rule (every type, every depth): an \
            attribute name is refused if one of its words is a secret word (\
            \(SecretAttributeRule.secretWords.sorted().joined(separator: ", "))) unless its last word is a \
            metadata word (\(SecretAttributeRule.metadataWords.sorted().joined(separator: ", "))); \
            docs/CATALOGUE.md.
            """
        )
    }

    /// `integer, required, >= 0`.
    static func describe(_ spec: EventCatalogue.FieldSpec) -> String {
        var parts = [spec.type.rawValue, spec.required ? "required" : "optional"]
        switch (spec.minimum, spec.maximum) {
        case (let minimum?, let maximum?): parts.append("\(minimum)...\(maximum)")
        case (let minimum?, nil): parts.append(">= \(minimum)")
        case (nil, let maximum?): parts.append("<= \(maximum)")
        case (nil, nil): break
        }
        switch (spec.minLength, spec.maxLength) {
        case (let minimum?, let maximum?): parts.append("length \(minimum)-\(maximum) bytes")
        case (let minimum?, nil): parts.append("length >= \(minimum) bytes")
        case (nil, let maximum?): parts.append("length <= \(maximum) bytes")
        case (nil, nil): break
        }
        if let allowed = spec.allowedValues { parts.append("one of " + allowed.joined(separator: ", ")) }
        return parts.joined(separator: ", ")
    }

    static func json(_ catalogue: EventCatalogue, _ types: [EventCatalogue.EventType]) -> JSONValue {
        .object([
            "eventTypes": .array(
                types.map { type in
                    .object([
                        "type": .string(type.name),
                        "priority": .string(type.priority.rawValue),
                        "summary": .string(type.summary),
                        "source": .string(EventCatalogue.builtIn.types[type.name] == nil ? "file" : "built-in"),
                        "additionalAttributes": .bool(type.additionalAttributes),
                        "attributes": .object(type.attributes.mapValues { Self.json($0) }),
                    ])
                }
            ),
            "maxPayloadBytes": .integer(Int64(catalogue.maxPayloadBytes)),
            "secretAttributeRule": .object([
                "secretWords": .array(SecretAttributeRule.secretWords.sorted().map { .string($0) }),
                "metadataWords": .array(SecretAttributeRule.metadataWords.sorted().map { .string($0) }),
            ]),
        ])
    }

    /// One attribute in the catalogue file's layout (`enum` for the allowed values).
    static func json(_ spec: EventCatalogue.FieldSpec) -> JSONValue {
        var members: [String: JSONValue] = ["type": .string(spec.type.rawValue), "required": .bool(spec.required)]
        if let minimum = spec.minimum { members["minimum"] = .integer(minimum) }
        if let maximum = spec.maximum { members["maximum"] = .integer(maximum) }
        if let minLength = spec.minLength { members["minLength"] = .integer(Int64(minLength)) }
        if let maxLength = spec.maxLength { members["maxLength"] = .integer(Int64(maxLength)) }
        if let allowed = spec.allowedValues { members["enum"] = .array(allowed.map { .string($0) }) }
        return .object(members)
    }
}
