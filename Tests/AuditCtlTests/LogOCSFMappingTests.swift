import AuditChain
import Foundation
import TestKit
import Testing

/// `auditctl log --format ocsf` for the password, conversation PIN and passcode types (issue 25): each maps to
/// Authentication (3002) with its activity, status, severity and protocol; the lock-state types stay Base Events.
/// Every type of the built-in catalogue and every system record meets its class's rules in OCSF's schema (issue
/// 31; scripts/ocsf_check.py validates against the schema itself, this needs no Python).
@Suite("auditctl log --format ocsf: the mapping and each class's rules")
struct LogOCSFMappingTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// type, attributes, activity_id, activity_name, status_id, severity_id, auth_protocol.
    static let expected: [(String, String, Int64, String, Int64, Int64, String)] = [
        (
            "PASSWORD_AUTH_SUCCESS", #"{"attemptCount":2,"reason":"DEVICE_BOOT"}"#, 1, "Logon", 1, 1, "Password"
        ),
        (
            "PASSWORD_AUTH_FAILURE",
            #"{"attemptCount":6,"reason":"LOCKOUT","errorCode":"ERR-107-011","retryAfterMs":20000}"#,
            1, "Logon", 2, 3, "Password"
        ),
        (
            "PASSWORD_ATTEMPTS_THROTTLED", #"{"failedAttempts":5,"lockoutMs":30000,"reason":"FIRST_UNLOCK"}"#, 99,
            "Password Attempts Throttled", 2, 3, "Password"
        ),
        ("CONVERSATION_PIN_SET", #"{"conversationId":"c1"}"#, 99, "Conversation PIN Set", 1, 1, "PIN"),
        ("CONVERSATION_PIN_REMOVED", #"{"conversationId":"c1"}"#, 99, "Conversation PIN Removed", 1, 1, "PIN"),
        (
            "CONVERSATION_PIN_VERIFIED", #"{"conversationId":"c1","attemptCount":1}"#, 99, "Conversation PIN Check",
            1, 1, "PIN"
        ),
        (
            "CONVERSATION_PIN_FAILED", #"{"conversationId":"c1","attemptCount":2}"#, 99, "Conversation PIN Check", 2,
            3, "PIN"
        ),
        (
            "CONVERSATION_PIN_LOCKED_OUT", #"{"conversationId":"c1","failedAttempts":5,"lockoutMs":30000}"#, 99,
            "Conversation PIN Locked Out", 2, 3, "PIN"
        ),
        (
            "CONVERSATION_PINS_RESET", #"{"reason":"LOGOUT","conversationCount":2}"#, 99, "Conversation PINs Reset", 1,
            1, "PIN"
        ),
        ("PASSCODE_LOCK_ENABLED", #"{"gracePeriodSeconds":60}"#, 99, "Passcode Lock Enabled", 1, 1, "Passcode"),
        ("PASSCODE_LOCK_DISABLED", "{}", 99, "Passcode Lock Disabled", 1, 1, "Passcode"),
        ("PASSCODE_AUTH_SUCCESS", #"{"attemptCount":1}"#, 1, "Logon", 1, 1, "Passcode"),
        ("PASSCODE_AUTH_FAILURE", #"{"attemptCount":3}"#, 1, "Logon", 2, 3, "Passcode"),
        (
            "PASSCODE_ATTEMPTS_THROTTLED", #"{"failedAttempts":5,"lockoutMs":30000}"#, 99,
            "Passcode Attempts Throttled",
            2, 3, "Passcode"
        ),
        ("FORGOT_PASSCODE_LOGOUT", "{}", 2, "Logoff", 1, 1, "Passcode"),
    ]

    @Test("each type's activity, status, severity, protocol and detail")
    func mapping() async throws {
        let state = directory.path + "/state"
        let initialized = try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"])
        try #require(initialized.status == 0, "\(initialized.stderr)")
        let lines =
            Self.expected.map { type, attributes, _, _, _, _, _ in
                #"{"type":"\#(type)","userId":"alice","deviceId":"phone-1","attributes":\#(attributes)}"#
            } + [
                #"{"type":"CONVERSATION_UNLOCKED","userId":"alice","deviceId":"phone-1","attributes":{"conversationId":"c1"}}"#
            ]
        let emitted = try await CLIHarness.auditctl(
            state,
            ["emit", "--json", "-"],
            stdin: lines.joined(separator: "\n") + "\n"
        )
        try #require(emitted.status == 0, "\(emitted.stderr)")

        let ocsf = try await CLIHarness.auditctl(state, ["log", "--format", "ocsf", "--kind", "event"])
        #expect(ocsf.status == 0, "\(ocsf.stderr)")
        let objects = try ocsf.stdout.split(separator: "\n").map { line in
            try #require(try JSONValue(parsing: Array(line.utf8)).objectValue)
        }
        try #require(objects.count == Self.expected.count + 1)
        for (object, row) in zip(objects, Self.expected) {
            let (type, _, activity, activityName, status, severity, authProtocol) = row
            #expect(object["message"] == .string(type))
            #expect(object["class_uid"] == 3002, "\(type)")
            #expect(object["activity_id"] == .integer(activity), "\(type)")
            #expect(object["activity_name"] == .string(activityName), "\(type)")
            #expect(object["type_uid"] == .integer(300_200 + activity), "\(type)")
            #expect(object["status_id"] == .integer(status), "\(type)")
            #expect(object["severity_id"] == .integer(severity), "\(type)")
            #expect(object["auth_protocol"] == .string(authProtocol), "\(type)")
            #expect(object["auth_protocol_id"] == 99, "\(type)")
            #expect(object["user"]?.objectValue?["uid"] == "alice")
            // OCSF's captions: "Authentication: Other" for activity 99, whose own name is in activity_name.
            #expect(object["type_name"] == .string("Authentication: " + (activity == 99 ? "Other" : activityName)))
        }
        let refused = objects[1]
        #expect(refused["status_code"] == "ERR-107-011")
        #expect(refused["status_detail"] == "LOCKOUT")
        let unmapped = refused["unmapped"]?.objectValue?["attributes"]?.objectValue
        #expect(unmapped == ["attemptCount": 6, "retryAfterMs": 20_000])
        #expect(objects[8]["status_detail"] == "LOGOUT")
        let lockState = try #require(objects.last)
        #expect(lockState["class_uid"] == 0, "the conversation lock state is not an authentication")
    }

    /// A value each attribute's rule accepts.
    static func sample(_ name: String, _ spec: EventCatalogue.FieldSpec) -> JSONValue {
        if let allowed = spec.allowedValues?.first { return .string(allowed) }
        switch spec.type {
        case .integer: return .integer(min(max(spec.minimum ?? 1, 1), spec.maximum ?? .max))
        case .boolean: return true
        case .object: return .object([:])
        case .array: return .array([])
        case .string:
            if name.hasSuffix("OccurredAt") { return "2026-11-21T10:00:00.000Z" }
            let text = String(repeating: "x", count: max(spec.minLength ?? 1, 1))
            return .string(String(text.prefix(spec.maxLength ?? 64)))
        }
    }

    /// The members an Authentication or Base Event line may carry: attributes of the class in OCSF 1.3.0 and 1.4.0
    /// (`device` under the `host` profile). scripts/ocsf_check.py checks the lines against the schema itself.
    static let classMembers: Set<String> = [
        "class_uid", "class_name", "category_uid", "category_name", "activity_id", "activity_name", "type_uid",
        "type_name", "status_id", "status", "status_code", "status_detail", "severity_id", "severity", "time",
        "duration", "message", "metadata", "unmapped", "user", "service", "device", "auth_protocol_id",
        "auth_protocol",
    ]

    @Test("every type of the built-in catalogue and every system record meets its OCSF class's rules")
    func everyTypeMeetsItsClass() async throws {
        let state = directory.path + "/state"
        try #require(try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"]).status == 0)
        let types = EventCatalogue.builtIn.types.values.sorted { $0.name < $1.name }
        let lines = types.map { type in
            let attributes = type.attributes.reduce(into: [String: JSONValue]()) {
                $0[$1.key] = Self.sample($1.key, $1.value)
            }
            let event = JSONValue.object([
                "type": .string(type.name), "userId": "alice", "deviceId": "phone-1", "attributes": .object(attributes),
            ])
            return String(decoding: event.canonicalBytes, as: UTF8.self)
        }
        let emitted = try await CLIHarness.auditctl(
            state,
            ["emit", "--input", "-"],
            stdin: lines.joined(separator: "\n")
        )
        try #require(emitted.status == 0, "\(emitted.stderr)")
        try #require(try await CLIHarness.auditctl(state, ["keys", "rotate"]).status == 0)
        try #require(try await CLIHarness.auditctl(state, ["checkpoint"]).status == 0)
        let ocsf = try await CLIHarness.auditctl(state, ["log", "--format", "ocsf"])
        #expect(ocsf.status == 0, "\(ocsf.stderr)")
        let objects = try ocsf.stdout.split(separator: "\n").map { line in
            try #require(try JSONValue(parsing: Array(line.utf8)).objectValue)
        }
        #expect(objects.count == types.count + 3, "genesis, one event per type, rotation, checkpoint")
        let printed = Set(objects.compactMap { $0["message"]?.stringValue })
        #expect(printed.isSuperset(of: types.map(\.name)))
        let captions: [Int64: String] = [1: "Logon", 2: "Logoff", 99: "Other"]
        for object in objects {
            let what = object["message"]?.stringValue ?? "?"
            #expect(Set(object.keys).isSubset(of: Self.classMembers), "\(what): \(object.keys.sorted())")
            let metadata = object["metadata"]?.objectValue
            switch object["class_uid"] {
            case 3002:
                // `device` is an attribute of Authentication under the host profile only.
                #expect(object["device"] != nil && metadata?["profiles"] == .array(["host"]), "\(what)")
                // Authentication needs a service or a destination endpoint.
                let service = object["service"]?.objectValue?["name"]?.stringValue
                #expect(service?.isEmpty == false, "\(what)")
                let activity = try #require(object["activity_id"]?.integerValue)
                let caption = try #require(captions[activity], "\(what): activity \(activity)")
                #expect(object["type_uid"] == .integer(300_200 + activity), "\(what)")
                #expect(object["type_name"] == .string("Authentication: " + caption), "\(what)")
            case 0:
                #expect(object["device"] == nil && object["service"] == nil && metadata?["profiles"] == nil, "\(what)")
                #expect(object["type_uid"] == 99 && object["type_name"] == "Base Event: Other", "\(what)")
            default:
                Issue.record("\(what): class \(String(describing: object["class_uid"]))")
            }
        }
    }
}
