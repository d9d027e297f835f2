import AuditChain
import Testing

@Suite("EventCatalogue")
struct EventCatalogueTests: CatalogueSuite {
    let catalogue = EventCatalogue.builtIn
    let now = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    @Test("a batch validates in order on several threads and names its first invalid event", arguments: [40, 600])
    func batchValidation(count: Int) throws {
        let events = (0..<count).map { ChainFixture.event($0) }
        let validated = try catalogue.validated(events, parallelism: 2)
        #expect(validated.map(\.event) == events)
        #expect(validated.allSatisfy { $0.canonicalPayload == $0.event.canonicalPayload })

        var broken = events
        broken[count / 2].attributes = [:]
        broken[count / 2 + 5].attributes["pin"] = "1234"
        #expect(throws: AuditEventError.self) { try catalogue.validated(broken, parallelism: 2) }
        do {
            _ = try catalogue.validated(broken, parallelism: 2)
        } catch {
            #expect(error == self.error(broken[count / 2]))
            #expect(error.code != .secretAttribute)
        }
    }

    @Test("the six biometric events and the lock events are built in and validate")
    func builtInTypes() throws {
        let valid: [(String, [String: JSONValue])] = [
            ("BIOMETRIC_ENABLED", ["biometryType": "faceId"]),
            ("BIOMETRIC_DISABLED", ["reason": "user"]),
            ("BIOMETRIC_AUTH_SUCCESS", ["unlockDurationMs": 0]),
            ("BIOMETRIC_AUTH_FAILURE", ["attemptCount": 1, "errorCode": "ERR-107-030"]),
            ("BIOMETRIC_REVOKED_SYSTEM_CHANGE", [:]),
            ("PASSWORD_AUTH_FALLBACK", ["reason": "LOCKOUT"]),
            ("PASSWORD_AUTH_SUCCESS", ["attemptCount": 1, "reason": "FIRST_UNLOCK"]),
            ("PASSWORD_AUTH_FAILURE", ["attemptCount": 2, "reason": "LOCKOUT", "errorCode": "ERR-107-010"]),
            ("PASSWORD_ATTEMPTS_THROTTLED", ["failedAttempts": 5, "lockoutMs": 30_000, "reason": "DEVICE_BOOT"]),
            ("MASTER_PIN_SET", [:]), ("MASTER_PIN_CHANGED", [:]), ("MASTER_PIN_REMOVED", [:]),
            ("CONVERSATION_LOCKED", ["conversationId": "c1"]), ("CONVERSATION_UNLOCKED", ["conversationId": "c1"]),
            ("ALL_CONVERSATIONS_UNLOCKED", [:]),
            ("CONVERSATION_PIN_SET", ["conversationId": "c1"]), ("CONVERSATION_PIN_REMOVED", ["conversationId": "c1"]),
            ("CONVERSATION_PIN_VERIFIED", ["conversationId": "c1", "attemptCount": 1]),
            ("CONVERSATION_PIN_FAILED", ["conversationId": "c1", "attemptCount": 3]),
            ("CONVERSATION_PIN_LOCKED_OUT", ["conversationId": "c1", "failedAttempts": 5, "lockoutMs": 30_000]),
            ("CONVERSATION_PINS_RESET", ["reason": "LOGOUT", "conversationCount": 0]),
            ("PASSCODE_LOCK_ENABLED", ["gracePeriodSeconds": 60]), ("PASSCODE_LOCK_DISABLED", [:]),
            ("PASSCODE_AUTH_SUCCESS", ["attemptCount": 1]), ("PASSCODE_AUTH_FAILURE", ["attemptCount": 2]),
            ("PASSCODE_ATTEMPTS_THROTTLED", ["failedAttempts": 5, "lockoutMs": 30_000]),
            ("FORGOT_PASSCODE_LOGOUT", [:]),
            // The Linux producers' sessions (docs/PRODUCERS.md).
            ("SESSION_OPENED", ["service": "sshd", "remoteHost": "192.0.2.7", "tty": "ssh"]), ("SESSION_CLOSED", [:]),
            (
                "AUDIT_EVENTS_DROPPED",
                [
                    "count": 3, "critical": 0, "reason": "overflow", "firstOccurredAt": "2026-11-21T10:00:00Z",
                    "lastOccurredAt": "2026-11-21T10:05:00Z",
                ]
            ),
        ]
        for (type, attributes) in valid {
            try catalogue.validate(event(type, attributes))
        }
        #expect(catalogue.types.count == valid.count)
        #expect(catalogue.priority(of: "BIOMETRIC_AUTH_SUCCESS") == .routine)
        #expect(catalogue.priority(of: "BIOMETRIC_REVOKED_SYSTEM_CHANGE") == .critical)
    }

    @Test("each bad input gives its error code, naming the type and the field")
    func badInputs() {
        let cases: [(AuditEvent, AuditEventError.Code, String?)] = [
            (event("NO_SUCH_EVENT", [:]), .unknownType, nil),
            (event("BIOMETRIC_AUTH_FAILURE", ["errorCode": "E"]), .missingField, "attributes.attemptCount"),
            (
                event("BIOMETRIC_AUTH_FAILURE", ["attemptCount": "two", "errorCode": "E"]), .wrongType,
                "attributes.attemptCount"
            ),
            (
                event("BIOMETRIC_AUTH_FAILURE", ["attemptCount": 0, "errorCode": "E"]), .outOfRange,
                "attributes.attemptCount"
            ),
            (event("BIOMETRIC_AUTH_SUCCESS", ["unlockDurationMs": -1]), .outOfRange, "attributes.unlockDurationMs"),
            (event("BIOMETRIC_ENABLED", ["biometryType": ""]), .outOfRange, "attributes.biometryType"),
            (event("BIOMETRIC_ENABLED", ["biometryType": "x", "extra": 1]), .unknownAttribute, "attributes.extra"),
            (event("BIOMETRIC_ENABLED", ["biometryType": "x", "pin": "1234"]), .secretAttribute, "attributes.pin"),
            (
                event("PASSWORD_AUTH_FALLBACK", ["reason": "x", "sessionToken": "abc"]), .secretAttribute,
                "attributes.sessionToken"
            ),
            (event("BIOMETRIC_DISABLED", ["reason": .integer(3)]), .wrongType, "attributes.reason"),
        ]
        for (event, code, field) in cases {
            let error = error(event)
            #expect(error?.code == code, "\(event.type) \(event.attributes)")
            #expect(error?.field == field)
            #expect(error?.eventType == event.type)
            #expect(error?.description.contains(event.type) == true)
        }
    }

    @Test("identifiers must be non-empty and bounded")
    func identifiers() {
        var bad = event("MASTER_PIN_SET", [:])
        bad.userId = ""
        #expect(error(bad)?.field == "userId")
        bad.userId = String(repeating: "u", count: 257)
        #expect(error(bad)?.code == .outOfRange)
        bad = event("MASTER_PIN_SET", [:])
        bad.idempotencyKey = ""
        #expect(error(bad)?.field == "idempotencyKey")
    }

    @Test("a payload over the maximum size is refused")
    func payloadTooLarge() {
        let big = event("BIOMETRIC_DISABLED", ["reason": .string(String(repeating: "r", count: 200))])
        var small = catalogue
        small.maxPayloadBytes = 256
        #expect(throws: AuditEventError.self) { try small.validate(big) }
        do {
            try small.validate(big)
        } catch {
            #expect(error.code == .payloadTooLarge)
        }
        #expect(EventCatalogue.defaultMaxPayloadBytes == 16_384)
    }

    @Test("the secret rule refuses secret-carrying names and allows metadata about secrets")
    func secretRule() {
        for name in [
            "pin", "PIN", "password", "newPassword", "passcode", "api_key", "apiKey", "sessionToken", "otp",
            "privateKey",
        ] {
            #expect(SecretAttributeRule.secretWord(in: name) != nil, "\(name) should be refused")
        }
        for name in [
            "pinLength", "keyId", "passwordChanged", "reason", "tokenType", "attemptCount", "keyboard", "spinner",
        ] {
            #expect(SecretAttributeRule.secretWord(in: name) == nil, "\(name) should pass")
        }
        // Nested values are checked too, even where undeclared attributes are allowed.
        var open = catalogue
        try! open.add(.init(name: "APP_EVENT", priority: .routine, attributes: [:], additionalAttributes: true))
        let nested = event("APP_EVENT", ["context": .object(["user": .object(["password": "hunter2"])])])
        #expect(throws: AuditEventError.self) { try open.validate(nested) }
        #expect(throws: CatalogueError.self) {
            try open.add(.init(name: "BAD", priority: .routine, attributes: ["masterPin": .init(type: .string)]))
        }
    }

    @Test("a deployment adds event types from a JSON file, without code changes")
    func catalogueFile() throws {
        let file = """
            {"version": 1, "eventTypes": [
              {"type": "VAULT_EXPORTED", "priority": "critical", "summary": "A vault was exported.",
               "attributes": {"format": {"type": "string", "enum": ["csv", "json"]},
                              "itemCount": {"type": "integer", "minimum": 0, "maximum": 100000},
                              "encrypted": {"type": "boolean"},
                              "note": {"type": "string", "required": false, "maxLength": 10}}}
            ]}
            """
        let extended = try catalogue.adding(json: Array(file.utf8))
        try extended.validate(event("VAULT_EXPORTED", ["format": "csv", "itemCount": 3, "encrypted": true]))
        #expect(extended.priority(of: "VAULT_EXPORTED") == .critical)
        let wrongEnum = event("VAULT_EXPORTED", ["format": "xml", "itemCount": 3, "encrypted": true])
        #expect(throws: AuditEventError.self) { try extended.validate(wrongEnum) }
        let tooMany = event("VAULT_EXPORTED", ["format": "csv", "itemCount": 100_001, "encrypted": true])
        #expect(throws: AuditEventError.self) { try extended.validate(tooMany) }
        #expect(throws: AuditEventError.self) { try catalogue.validate(event("VAULT_EXPORTED", [:])) }
    }

    @Test("bad catalogue files are refused with a message naming the problem")
    func badCatalogueFiles() {
        let cases = [
            "not json",
            #"{"version": 2, "eventTypes": []}"#,
            #"{"version": 1, "eventTypes": [{"type": "lower", "priority": "routine"}]}"#,
            #"{"version": 1, "eventTypes": [{"type": "BIOMETRIC_ENABLED", "priority": "routine"}]}"#,
            #"{"version": 1, "eventTypes": [{"type": "X", "priority": "urgent"}]}"#,
            #"{"version": 1, "eventTypes": [{"type": "X", "priority": "routine", "attributes": {"a": {"type": "float"}}}]}"#,
            #"{"version": 1, "eventTypes": [{"type": "X", "priority": "routine", "attributes": {"userPassword": {"type": "string"}}}]}"#,
        ]
        for text in cases {
            #expect(throws: CatalogueError.self, "\(text)") { _ = try catalogue.adding(json: Array(text.utf8)) }
        }
    }

    @Test("producer input: one object or JSON Lines, all or nothing, errors name the line")
    func producerInput() throws {
        var counter = 0
        let makeKey = {
            counter += 1
            return "gen-\(counter)"
        }
        let single =
            #"{"type": "BIOMETRIC_AUTH_SUCCESS", "userId": "u", "deviceId": "d", "attributes": {"unlockDurationMs": 5}}"#
        let events = try AuditEvent.decodeInput(
            Array(single.utf8),
            catalogue: catalogue,
            now: now,
            makeIdempotencyKey: makeKey
        )
        #expect(events.count == 1)
        #expect(events[0].occurredAt == now)
        #expect(events[0].idempotencyKey == "gen-1")

        let lines = """
            {"type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "occurredAt": "2026-11-21T10:00:00+01:00", "idempotencyKey": "x"}

            {"type": "BIOMETRIC_AUTH_FAILURE", "userId": "u", "deviceId": "d", "attributes": {"attemptCount": 1, "errorCode": "E"}}
            """
        let two = try AuditEvent.decodeInput(
            Array(lines.utf8),
            catalogue: catalogue,
            now: now,
            makeIdempotencyKey: makeKey
        )
        #expect(two.map(\.type) == ["MASTER_PIN_SET", "BIOMETRIC_AUTH_FAILURE"])
        #expect(two[0].occurredAt.rfc3339 == "2026-11-21T09:00:00.000Z")

        let badSecond =
            lines + "\n"
            + #"{"type": "BIOMETRIC_AUTH_FAILURE", "userId": "u", "deviceId": "d", "attributes": {"attemptCount": 0, "errorCode": "E"}}"#
        do {
            _ = try AuditEvent.decodeInput(
                Array(badSecond.utf8),
                catalogue: catalogue,
                now: now,
                makeIdempotencyKey: makeKey
            )
            Issue.record("accepted a bad line")
        } catch {
            #expect(error.line == 4)
            #expect(error.code == .outOfRange)
            #expect(error.description.hasPrefix("line 4: "))
        }

        let invalidUTF8: [UInt8] =
            Array(#"{"type": "MASTER_PIN_SET", "userId": ""#.utf8) + [0xff, 0xfe] + Array(#"", "deviceId": "d"}"#.utf8)
        do {
            _ = try AuditEvent.decodeInput(invalidUTF8, catalogue: catalogue, now: now, makeIdempotencyKey: makeKey)
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error.code == .invalidUTF8)
        }

        let cases: [(String, AuditEventError.Code, String?)] = [
            (#"{"userId": "u", "deviceId": "d"}"#, .missingField, "type"),
            (#"{"type": "MASTER_PIN_SET", "deviceId": "d"}"#, .missingField, "userId"),
            (#"{"type": "MASTER_PIN_SET", "userId": 5, "deviceId": "d"}"#, .wrongType, "userId"),
            (
                #"{"type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "occurredAt": "yesterday"}"#, .outOfRange,
                "occurredAt"
            ),
            (#"{"type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "pin": "1234"}"#, .unknownAttribute, "pin"),
            (
                #"{"type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "attributes": []}"#, .wrongType,
                "attributes"
            ),
            (
                #"{"type": "BIOMETRIC_AUTH_SUCCESS", "userId": "u", "deviceId": "d", "attributes": {"unlockDurationMs": 1.5}}"#,
                .malformedJSON, nil
            ),
            (#"[1, 2]"#, .wrongType, nil),
        ]
        for (text, code, field) in cases {
            do {
                _ = try AuditEvent.decodeInput(
                    Array(text.utf8),
                    catalogue: catalogue,
                    now: now,
                    makeIdempotencyKey: makeKey
                )
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == code, "\(text): \(error)")
                #expect(error.field == field, "\(text): \(error)")
            }
        }
    }
}
