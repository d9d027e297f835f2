import AuditChain
import Foundation
import TestKit
import Testing

/// `auditctl pam` in whole PAM stacks without root: pam_wrapper (LD_PRELOAD) loads the stack from a directory of
/// our own, pam_matrix checks passwords from a file, pamtester drives it; the stack has Debian's common-auth shape
/// (docs/PRODUCERS.md).
@Suite(
    "auditctl pam in a PAM stack (pam_wrapper, pam_matrix, pamtester)",
    .enabled(if: ProducerHarness.mustRun(PAMStack.programs))
)
struct PAMStackTests {
    @Test("success, wrong password and unknown user are each sealed once, with service and remote host")
    func outcomesSealed() async throws {
        let stack = try PAMStack()
        let agent = try await ProducerHarness.startAgent(stack.state, output: stack.directory.file("agent.log"))
        defer { agent.end() }
        #expect(try await stack.authenticate("alice", password: "secret") == 0)
        #expect(try await stack.authenticate("alice", password: "wrong") != 0)
        #expect(try await stack.authenticate("nobody", password: "secret") != 0)
        let events = try await ProducerHarness.events(stack.state)
        #expect(events.map(\.type) == ["PASSWORD_AUTH_SUCCESS", "PASSWORD_AUTH_FAILURE", "PASSWORD_AUTH_FAILURE"])
        #expect(events.map(\.userId) == ["alice", "alice", "nobody"])
        #expect(events.allSatisfy { $0.attributes["service"] == .string(PAMStack.service) })
        #expect(events.allSatisfy { $0.attributes["remoteHost"] == "192.0.2.7" })
        #expect(events.map { $0.attributes["attemptCount"] } == [1, 1, 1])
        #expect(events.dropFirst().allSatisfy { $0.attributes["errorCode"] == "ERR-107-010" })
        #expect(try await ProducerHarness.verifies(stack.state))
        await ProducerHarness.stop(agent)
    }

    @Test("attempts are counted per user and service: two failures, then the success is attempt 3")
    func attemptsCounted() async throws {
        let stack = try PAMStack()
        let agent = try await ProducerHarness.startAgent(stack.state, output: stack.directory.file("agent.log"))
        defer { agent.end() }
        #expect(try await stack.authenticate("alice", password: "wrong") != 0)
        #expect(try await stack.authenticate("alice", password: "wrong") != 0)
        #expect(try await stack.authenticate("alice", password: "secret") == 0)
        let events = try await ProducerHarness.events(stack.state)
        #expect(events.map { $0.attributes["attemptCount"] } == [1, 2, 3])
        await ProducerHarness.stop(agent)
    }

    @Test("agent down: the login is unaffected, auditctl pam exits 0, and the event is sealed when the agent returns")
    func agentDown() async throws {
        let stack = try PAMStack()
        // No agent yet: logins pass or fail as before.
        #expect(try await stack.authenticate("alice", password: "secret") == 0)
        #expect(try await stack.authenticate("alice", password: "wrong") != 0)
        let direct = try await ProducerHarness.run(
            ProducerHarness.product("auditctl"),
            stack.pamArguments + ["--outcome", "failure"],
            environment: ["PAM_USER": "bob", "PAM_SERVICE": "sshd", "PAM_RHOST": "192.0.2.9", "PAM_TYPE": "auth"]
        )
        #expect(direct.status == 0)
        #expect(String(decoding: direct.stderr, as: UTF8.self).contains("kept for later"))
        // Without a buffer file, what cannot be delivered is reported dropped, and the exit is still 0.
        let dropped = try await ProducerHarness.run(
            ProducerHarness.product("auditctl"),
            // A generous bound: the default 200 ms can run out on a loaded machine before the command even tries.
            ["pam", "--socket", stack.state + "/ingest.sock", "--outcome", "success", "--timeout-ms", "10000"],
            environment: ["PAM_USER": "carol", "PAM_SERVICE": "sshd"]
        )
        #expect(dropped.status == 0)
        let said = String(decoding: dropped.stderr, as: UTF8.self)
        #expect(said.contains("dropped event"))
        #expect(!said.contains("carol"))
        let agent = try await ProducerHarness.startAgent(stack.state, output: stack.directory.file("agent.log"))
        defer { agent.end() }
        // The next login delivers what waited, first.
        #expect(try await stack.authenticate("alice", password: "secret") == 0)
        let events = try await ProducerHarness.events(stack.state)
        #expect(
            events.map(\.type) == [
                "PASSWORD_AUTH_SUCCESS", "PASSWORD_AUTH_FAILURE", "PASSWORD_AUTH_FAILURE", "PASSWORD_AUTH_SUCCESS",
            ]
        )
        #expect(events.map(\.userId) == ["alice", "alice", "bob", "alice"])
        #expect(events[2].attributes["remoteHost"] == "192.0.2.9")
        #expect(try await ProducerHarness.verifies(stack.state))
        await ProducerHarness.stop(agent)
    }

    @Test("hostile invocations never fail the stack: bad flags, a bad outcome, a socket that is not one")
    func hostileInvocations() async throws {
        let stack = try PAMStack()
        let notASocket = stack.directory.file("plain-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: notASocket))
        let cases: [[String]] = [
            ["pam"], ["pam", "--socket", notASocket, "--outcome", "bogus"],
            ["pam", "--socket", notASocket, "--outcome", "failure", "--timeout-ms", "0"],
            ["pam", "--socket", notASocket, "--outcome", "failure"],
            ["pam", "--socket", String(repeating: "s", count: 300), "--outcome", "open"],
            ["pam", "--socket", notASocket, "--outcome", "close", "--buffer-file", stack.directory.path],
        ]
        for arguments in cases {
            let result = try await ProducerHarness.run(
                ProducerHarness.product("auditctl"),
                arguments,
                environment: ["PAM_USER": String(repeating: "u", count: 5000)]
            )
            #expect(result.status == 0, "\(arguments)")
        }
    }
}
