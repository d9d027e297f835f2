/// Why an event was refused: which event type, which field, and what is wrong.
public struct AuditEventError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of validation failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case unknownType, missingField, wrongType, outOfRange, invalidUTF8, payloadTooLarge
            case secretAttribute, unknownAttribute, malformedJSON
        }
        let base: Base
        /// The event type is not in the catalogue.
        public static let unknownType = Code(base: .unknownType)
        /// A required field is absent.
        public static let missingField = Code(base: .missingField)
        /// A field has the wrong JSON type.
        public static let wrongType = Code(base: .wrongType)
        /// A value is outside its allowed range, length or set.
        public static let outOfRange = Code(base: .outOfRange)
        /// Input bytes are not valid UTF-8.
        public static let invalidUTF8 = Code(base: .invalidUTF8)
        /// The canonical payload is larger than the catalogue's maximum.
        public static let payloadTooLarge = Code(base: .payloadTooLarge)
        /// An attribute name says it carries a secret (PIN, password, passcode, token, key...).
        public static let secretAttribute = Code(base: .secretAttribute)
        /// An attribute the event type does not declare.
        public static let unknownAttribute = Code(base: .unknownAttribute)
        /// The input is not acceptable JSON.
        public static let malformedJSON = Code(base: .malformedJSON)
        /// The stable name used in JSON output (`unknownType`, `missingField`, ...).
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// The event type, when known.
    public var eventType: String?
    /// The offending field (`attributes.attemptCount` for an attribute), when there is one.
    public var field: String?
    /// Details: the expected and the actual value or type.
    public var message: String
    /// The 1-based input line, for JSON Lines input.
    public var line: Int?

    /// Creates an error.
    public init(_ code: Code, eventType: String? = nil, field: String? = nil, _ message: String) {
        self.code = code
        self.eventType = eventType
        self.field = field
        self.message = message
    }

    public var description: String {
        var parts: [String] = []
        if let eventType { parts.append("event type \(eventType)") }
        if let field { parts.append("field '\(field)'") }
        let location = parts.isEmpty ? "" : parts.joined(separator: ", ") + ": "
        let prefix = line.map { "line \($0): " } ?? ""
        return "\(prefix)\(location)\(message) (\(code))"
    }
}
