/// Which event types exist, which attributes each requires, and their types and ranges.
///
/// The catalogue is data: the built-in types are themselves loaded from the JSON layout that a deployment
/// uses to add its own (``adding(json:)``; docs/CATALOGUE.md).
public struct EventCatalogue: Sendable {
    /// How urgently an event type must be delivered; critical events are evicted from delivery last.
    public enum Priority: String, Sendable, Hashable {
        case routine, critical
    }

    /// The JSON type an attribute must have.
    public enum FieldType: String, Sendable, Hashable {
        case string, integer, boolean, object, array
    }

    /// The rule for one attribute.
    public struct FieldSpec: Sendable, Hashable {
        /// Its JSON type.
        public var type: FieldType
        /// Whether it must be present (default true).
        public var required = true
        /// Inclusive lower bound of an integer.
        public var minimum: Int64?
        /// Inclusive upper bound of an integer.
        public var maximum: Int64?
        /// Minimum length of a string, in UTF-8 bytes.
        public var minLength: Int?
        /// Maximum length of a string, in UTF-8 bytes.
        public var maxLength: Int?
        /// The values a string may take, when restricted.
        public var allowedValues: [String]?

        /// Creates a rule.
        public init(
            type: FieldType,
            required: Bool = true,
            minimum: Int64? = nil,
            maximum: Int64? = nil,
            minLength: Int? = nil,
            maxLength: Int? = nil,
            allowedValues: [String]? = nil
        ) {
            self.type = type
            self.required = required
            self.minimum = minimum
            self.maximum = maximum
            self.minLength = minLength
            self.maxLength = maxLength
            self.allowedValues = allowedValues
        }
    }

    /// One event type.
    public struct EventType: Sendable, Hashable {
        /// Its name, `[A-Z][A-Z0-9_]*`, at most 64 characters.
        public var name: String
        /// Its delivery priority.
        public var priority: Priority
        /// The attributes it declares.
        public var attributes: [String: FieldSpec]
        /// Whether undeclared attributes are accepted (default false).
        public var additionalAttributes: Bool
        /// A human description.
        public var summary: String

        /// Creates an event type.
        public init(
            name: String,
            priority: Priority,
            attributes: [String: FieldSpec],
            additionalAttributes: Bool = false,
            summary: String = ""
        ) {
            self.name = name
            self.priority = priority
            self.attributes = attributes
            self.additionalAttributes = additionalAttributes
            self.summary = summary
        }
    }

    /// The default maximum size of an event's canonical payload: 16 KiB.
    public static let defaultMaxPayloadBytes = 16 * 1024
    /// Maximum length in UTF-8 bytes of `userId`, `deviceId` and `idempotencyKey`.
    public static let maxIdentifierBytes = 256

    /// The known types by name.
    public private(set) var types: [String: EventType]
    /// Largest canonical payload accepted, in bytes.
    public var maxPayloadBytes: Int

    /// Creates a catalogue from event types.
    /// - Throws: ``CatalogueError`` if a name is invalid, repeated, or an attribute name carries a secret.
    public init(types: [EventType], maxPayloadBytes: Int = Self.defaultMaxPayloadBytes) throws(CatalogueError) {
        self.types = [:]
        self.maxPayloadBytes = maxPayloadBytes
        for type in types { try add(type) }
    }

    /// Adds one event type.
    /// - Throws: ``CatalogueError`` if the name is invalid or taken, or an attribute name carries a secret.
    public mutating func add(_ type: EventType) throws(CatalogueError) {
        guard Self.isValidTypeName(type.name) else {
            throw CatalogueError("event type name \"\(type.name)\" must match [A-Z][A-Z0-9_]* (at most 64)")
        }
        guard types[type.name] == nil else {
            throw CatalogueError("event type \(type.name) is already defined; the catalogue cannot redefine a type")
        }
        for name in type.attributes.keys {
            if let word = SecretAttributeRule.secretWord(in: name) {
                throw CatalogueError(
                    "event type \(type.name) declares attribute '\(name)', which names a secret ('\(word)'); "
                        + "an audit log must never hold secrets"
                )
            }
        }
        types[type.name] = type
    }

    /// The priority of a type; unknown types count as critical so they are never evicted first.
    public func priority(of typeName: String) -> Priority { types[typeName]?.priority ?? .critical }

    static func isValidTypeName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first)
        else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }
}

/// A catalogue definition that cannot be used, with what to fix.
public struct CatalogueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { "catalogue: \(message)" }
}
