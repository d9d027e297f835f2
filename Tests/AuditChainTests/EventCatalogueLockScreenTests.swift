import AuditChain
import Testing

/// The built-in types of password attempts, conversation PINs and the app passcode lock (issue 25): each accepts
/// its declared attributes and refuses missing, mistyped, out-of-range and secret-looking ones.
@Suite("EventCatalogue: password, PIN and passcode types")
struct EventCatalogueLockScreenTests: CatalogueSuite {
    let catalogue = EventCatalogue.builtIn

    /// One valid event of each type, and its priority.
    static let valid: [(type: String, priority: EventCatalogue.Priority, attributes: [String: JSONValue])] = [
        ("PASSWORD_AUTH_SUCCESS", .routine, ["attemptCount": 1, "reason": "FIRST_UNLOCK"]),
        ("PASSWORD_AUTH_FAILURE", .critical, ["attemptCount": 6, "reason": "LOCKOUT", "errorCode": "ERR-107-011"]),
        ("PASSWORD_ATTEMPTS_THROTTLED", .critical, ["failedAttempts": 5, "lockoutMs": 30_000, "reason": "LOCKOUT"]),
        ("CONVERSATION_PIN_SET", .critical, ["conversationId": "chat-9"]),
        ("CONVERSATION_PIN_REMOVED", .critical, ["conversationId": "chat-9"]),
        ("CONVERSATION_PIN_VERIFIED", .routine, ["conversationId": "chat-9", "attemptCount": 2]),
        ("CONVERSATION_PIN_FAILED", .critical, ["conversationId": "chat-9", "attemptCount": 1]),
        ("CONVERSATION_PIN_LOCKED_OUT", .critical, ["conversationId": "chat-9", "failedAttempts": 5, "lockoutMs": 1]),
        ("CONVERSATION_PINS_RESET", .critical, ["reason": "LOGOUT", "conversationCount": 3]),
        ("PASSCODE_LOCK_ENABLED", .critical, ["gracePeriodSeconds": 0]),
        ("PASSCODE_LOCK_DISABLED", .critical, [:]),
        ("PASSCODE_AUTH_SUCCESS", .routine, ["attemptCount": 1]),
        ("PASSCODE_AUTH_FAILURE", .critical, ["attemptCount": 1]),
        ("PASSCODE_ATTEMPTS_THROTTLED", .critical, ["failedAttempts": 5, "lockoutMs": 30_000]),
        ("FORGOT_PASSCODE_LOGOUT", .critical, [:]),
    ]

    @Test("each type accepts its attributes and has its priority")
    func validEvents() {
        for (type, priority, attributes) in Self.valid {
            #expect(error(event(type, attributes)) == nil, "\(type)")
            #expect(catalogue.types[type]?.priority == priority, "\(type)")
            #expect(catalogue.types[type]?.summary.isEmpty == false, "\(type)")
        }
        #expect(
            error(event("PASSWORD_AUTH_FAILURE", Self.valid[1].attributes.merging(["retryAfterMs": 0]) { $1 })) == nil
        )
        #expect(error(event("PASSCODE_AUTH_FAILURE", ["attemptCount": 1, "retryAfterMs": 5])) == nil)
        #expect(
            error(event("CONVERSATION_PIN_FAILED", ["conversationId": "c", "attemptCount": 1, "retryAfterMs": 9]))
                == nil
        )
    }

    @Test("each required attribute, removed, is reported missing")
    func missingAttributes() {
        for (type, _, attributes) in Self.valid {
            for name in attributes.keys {
                var fewer = attributes
                fewer[name] = nil
                let found = error(event(type, fewer))
                #expect(found?.code == .missingField, "\(type) without \(name)")
                #expect(found?.field == "attributes.\(name)")
            }
        }
    }

    @Test("out-of-range and mistyped values are refused")
    func outOfRange() {
        var refused: [(String, [String: JSONValue], AuditEventError.Code, String)] = []
        for (type, _, attributes) in Self.valid {
            for (name, value) in attributes {
                switch value {
                case .string:
                    let limit = name == "conversationId" ? 256 : 64
                    var longer = attributes
                    longer[name] = .string(String(repeating: "x", count: limit + 1))
                    refused.append((type, longer, .outOfRange, name))
                    var empty = attributes
                    empty[name] = ""
                    refused.append((type, empty, .outOfRange, name))
                    var number = attributes
                    number[name] = 7
                    refused.append((type, number, .wrongType, name))
                case .integer:
                    let minimum: Int64 = ["lockoutMs", "attemptCount", "failedAttempts"].contains(name) ? 1 : 0
                    var below = attributes
                    below[name] = .integer(minimum - 1)
                    refused.append((type, below, .outOfRange, name))
                    var text = attributes
                    text[name] = "1"
                    refused.append((type, text, .wrongType, name))
                default:
                    Issue.record("unexpected value \(value) in \(type)")
                }
            }
        }
        #expect(refused.count > 40)
        for (type, attributes, code, name) in refused {
            let found = error(event(type, attributes))
            #expect(found?.code == code, "\(type) \(attributes)")
            #expect(found?.field == "attributes.\(name)", "\(type) \(attributes)")
        }
        #expect(
            error(event("PASSWORD_AUTH_FAILURE", ["retryAfterMs": -1].merging(Self.valid[1].attributes) { $1 }))?.code
                == .outOfRange
        )
    }

    @Test("no type can carry a PIN, passcode or password: such attributes are refused as secrets")
    func secretsRefused() {
        for (type, _, attributes) in Self.valid {
            for name in ["pin", "passcode", "password", "conversationPin", "newPasscode", "masterPin"] {
                let found = error(event(type, attributes.merging([name: "1234"]) { $1 }))
                #expect(found?.code == .secretAttribute, "\(type) with \(name)")
                #expect(found?.field == "attributes.\(name)")
            }
            for name in catalogue.types[type]?.attributes.keys.sorted() ?? [] {
                #expect(SecretAttributeRule.secretWord(in: name) == nil, "\(type).\(name)")
            }
        }
        let nested = event("CONVERSATION_PIN_SET", ["conversationId": "c", "extra": .object(["pin": "1234"])])
        #expect(error(nested)?.code == .secretAttribute)
    }

    @Test("the existing names keep working: a log written before these types validates as before")
    func existingNames() {
        for (type, attributes) in [
            ("PASSCODE_AUTH_FAILURE", ["attemptCount": JSONValue.integer(2)]), ("FORGOT_PASSCODE_LOGOUT", [:]),
            ("CONVERSATION_LOCKED", ["conversationId": "c1"]), ("CONVERSATION_UNLOCKED", ["conversationId": "c1"]),
            ("ALL_CONVERSATIONS_UNLOCKED", [:]), ("MASTER_PIN_SET", [:]),
        ] {
            #expect(error(event(type, attributes)) == nil, "\(type)")
        }
    }
}
