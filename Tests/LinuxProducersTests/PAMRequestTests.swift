import AuditChain
import LinuxProducers
import Testing

@Suite("PAM's variables to events")
struct PAMRequestTests {
    static let environment = [
        "PAM_USER": "alice", "PAM_SERVICE": "sshd", "PAM_RHOST": "192.0.2.7", "PAM_TTY": "ssh",
        "PAM_TYPE": "auth", "PAM_AUTHTOK": "hunter2", "PATH": "/usr/bin",
    ]
    static let at = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    @Test("success and failure are the password events, with service, remote host and tty, valid in the catalogue")
    func passwordEvents() throws {
        let success = PAMRequest(outcome: .success, environment: Self.environment)
            .event(attemptCount: 3, deviceId: "host-1", occurredAt: Self.at, idempotencyKey: "k1")
        #expect(success.type == "PASSWORD_AUTH_SUCCESS")
        #expect(success.userId == "alice" && success.deviceId == "host-1" && success.occurredAt == Self.at)
        #expect(
            success.attributes == [
                "attemptCount": 3, "reason": "pam", "service": "sshd", "remoteHost": "192.0.2.7", "tty": "ssh",
            ]
        )
        let failure = PAMRequest(outcome: .failure, environment: Self.environment)
            .event(attemptCount: 2, deviceId: "host-1", occurredAt: Self.at, idempotencyKey: "k2")
        #expect(failure.type == "PASSWORD_AUTH_FAILURE")
        #expect(failure.attributes["errorCode"] == "ERR-107-010")
        #expect(failure.attributes["attemptCount"] == 2)
        for event in [success, failure] {
            try EventCatalogue.builtIn.validate(event)
            // Nothing of the password, nor any variable but the PAM_* ones read.
            #expect(!String(decoding: event.canonicalPayload, as: UTF8.self).contains("hunter2"))
            #expect(!String(decoding: event.canonicalPayload, as: UTF8.self).contains("/usr/bin"))
        }
    }

    @Test("sessions are SESSION_OPENED and SESSION_CLOSED, valid in the catalogue")
    func sessionEvents() throws {
        for (outcome, type) in [(PAMRequest.Outcome.open, "SESSION_OPENED"), (.close, "SESSION_CLOSED")] {
            let event = PAMRequest(outcome: outcome, environment: Self.environment)
                .event(attemptCount: 1, deviceId: "host-1", occurredAt: Self.at, idempotencyKey: "k")
            #expect(event.type == type)
            #expect(event.attributes == ["service": "sshd", "remoteHost": "192.0.2.7", "tty": "ssh"])
            try EventCatalogue.builtIn.validate(event)
        }
    }

    @Test("missing, empty and oversized variables still give a valid event")
    func hostileVariables() throws {
        let empty = PAMRequest(outcome: .failure, environment: ["PAM_USER": "", "PAM_RHOST": ""])
        #expect(empty.user == PAMRequest.unknownUser && empty.remoteHost == nil && empty.service == nil)
        let huge = PAMRequest(
            outcome: .failure,
            environment: [
                "PAM_USER": String(repeating: "é", count: 500), "PAM_SERVICE": String(repeating: "s", count: 999),
                "PAM_RHOST": String(repeating: "h", count: 999), "PAM_TTY": "\u{0}\u{7}/dev/pts/0",
            ]
        )
        #expect(huge.user.utf8.count <= 256 && huge.service?.utf8.count == 64 && huge.remoteHost?.utf8.count == 256)
        for request in [empty, huge] {
            try EventCatalogue.builtIn.validate(
                request.event(attemptCount: 0, deviceId: "host-1", occurredAt: Self.at, idempotencyKey: "k")
            )
        }
        #expect(empty.attemptKey != huge.attemptKey)
    }
}
