import AuditChain
import Foundation
import TestKit
import Testing

/// `auditctl log --format ocsf` for the password, conversation PIN and passcode types (issue 25): each maps to
/// Authentication (3002) with its activity, status, severity and protocol; the lock-state types stay Base Events.
@Suite("auditctl log --format ocsf: password, PIN and passcode events")
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
}
