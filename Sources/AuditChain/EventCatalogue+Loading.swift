/// Reading catalogue definitions from the JSON layout of docs/CATALOGUE.md.
extension EventCatalogue {
    /// The catalogue with the built-in types only.
    public static let builtIn: EventCatalogue = {
        do {
            return try EventCatalogue(types: []).adding(json: Array(builtInDefinitions.utf8))
        } catch {
            preconditionFailure("built-in catalogue is invalid: \(error)")
        }
    }()

    /// A copy with the event types of a catalogue file added.
    /// - Parameter json: a catalogue document (`{"version": 1, "eventTypes": [...]}`).
    /// - Throws: ``CatalogueError`` naming the type and member that are wrong.
    public func adding(json: [UInt8]) throws(CatalogueError) -> EventCatalogue {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: json)
        } catch {
            throw CatalogueError(error.description)
        }
        guard let root = document.objectValue else { throw CatalogueError("the document must be a JSON object") }
        guard root["version"] == .integer(1) else { throw CatalogueError("\"version\" must be 1") }
        if let extra = root.keys.first(where: { !["version", "eventTypes"].contains($0) }) {
            throw CatalogueError("unknown member \"\(extra)\" at the top level")
        }
        guard case .array(let entries)? = root["eventTypes"] else {
            throw CatalogueError("\"eventTypes\" must be an array")
        }
        var copy = self
        for (index, entry) in entries.enumerated() {
            try copy.add(Self.eventType(from: entry, index: index))
        }
        return copy
    }

    static func eventType(from value: JSONValue, index: Int) throws(CatalogueError) -> EventType {
        guard let members = value.objectValue, let name = members["type"]?.stringValue else {
            throw CatalogueError("eventTypes[\(index)] must be an object with a string \"type\"")
        }
        let allowed: Set = ["type", "priority", "summary", "attributes", "additionalAttributes"]
        if let extra = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw CatalogueError("event type \(name): unknown member \"\(extra)\"")
        }
        guard let priorityName = members["priority"]?.stringValue, let priority = Priority(rawValue: priorityName)
        else { throw CatalogueError("event type \(name): \"priority\" must be \"routine\" or \"critical\"") }
        var additional = false
        switch members["additionalAttributes"] {
        case nil: break
        case .bool(let flag)?: additional = flag
        default: throw CatalogueError("event type \(name): \"additionalAttributes\" must be a boolean")
        }
        var attributes: [String: FieldSpec] = [:]
        switch members["attributes"] {
        case nil: break
        case .object(let specs)?:
            for (attribute, spec) in specs {
                attributes[attribute] = try fieldSpec(from: spec, where: "event type \(name), attribute \(attribute)")
            }
        default: throw CatalogueError("event type \(name): \"attributes\" must be an object")
        }
        return EventType(
            name: name,
            priority: priority,
            attributes: attributes,
            additionalAttributes: additional,
            summary: members["summary"]?.stringValue ?? ""
        )
    }

    static func fieldSpec(from value: JSONValue, where place: String) throws(CatalogueError) -> FieldSpec {
        guard let members = value.objectValue, let typeName = members["type"]?.stringValue,
            let type = FieldType(rawValue: typeName)
        else {
            throw CatalogueError("\(place): needs \"type\" (string, integer, boolean, object or array)")
        }
        let allowed: Set = ["type", "required", "minimum", "maximum", "minLength", "maxLength", "enum"]
        if let extra = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw CatalogueError("\(place): unknown member \"\(extra)\"")
        }
        var spec = FieldSpec(type: type)
        for (key, member) in members where key != "type" {
            switch (key, member) {
            case ("required", .bool(let flag)): spec.required = flag
            case ("minimum", .integer(let number)) where type == .integer: spec.minimum = number
            case ("maximum", .integer(let number)) where type == .integer: spec.maximum = number
            case ("minLength", .integer(let number)) where type == .string && number >= 0: spec.minLength = Int(number)
            case ("maxLength", .integer(let number)) where type == .string && number >= 0: spec.maxLength = Int(number)
            case ("enum", .array(let values)) where type == .string:
                var strings: [String] = []
                for value in values {
                    guard let text = value.stringValue else { throw CatalogueError("\(place): \"enum\" holds strings") }
                    strings.append(text)
                }
                spec.allowedValues = strings
            default:
                throw CatalogueError("\(place): \"\(key)\" has the wrong type or does not apply to \(typeName)")
            }
        }
        return spec
    }
}
