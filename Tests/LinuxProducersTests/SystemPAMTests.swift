import AuditChain
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `auditctl pam` in the system's own PAM, as root (CI runs as root): a throwaway user and a service file of its
/// own in /etc/pam.d with Debian's common-auth shape around pam_unix, driven by pamtester, and by sudo (a sudoers.d
/// file of its own gives the user that PAM service). Everything is removed afterwards whatever happens (defer), and
/// the names are unique, so nothing of the machine's PAM or sudo is touched.
@Suite(
    "auditctl pam in /etc/pam.d with pam_unix and a throwaway user (root)",
    .enabled(
        if: getuid() == 0
            && ProducerHarness.mustRun([
                "/usr/bin/pamtester", "/usr/sbin/useradd", "/usr/sbin/userdel", "/usr/sbin/chpasswd",
            ])
    )
)
struct SystemPAMTests {
    /// A throwaway user with a password, and a PAM service of its own recording through `auditctl pam` into an
    /// agent at `state`.
    struct ThrowawayStack {
        let directory: ShortTemporaryDirectory
        let user: String
        let password: String
        let service: String
        var state: String { directory.file("agent") }
    }

    /// Makes the user and the service, runs `body` with the agent running, and removes them whatever happens.
    static func withThrowawayStack(_ body: (ThrowawayStack) async throws -> Void) async throws {
        let directory = try ShortTemporaryDirectory(prefix: "spam")
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let stack = ThrowawayStack(
            directory: directory,
            user: "acpam\(suffix)",
            password: "Pw-\(UUID().uuidString)",
            service: "audit-chain-test-\(suffix)"
        )
        let serviceFile = "/etc/pam.d/" + stack.service
        defer {
            unlink(serviceFile)
            _ = try? ChildProcess.run("/usr/sbin/userdel", [stack.user], environment: [:], stdin: nil, timeout: 60)
        }
        let added = try await ProducerHarness.run(
            "/usr/sbin/useradd",
            ["-M", "-N", "-s", "/bin/sh", stack.user]
        )
        try #require(added.status == 0, "\(String(decoding: added.stderr, as: UTF8.self))")
        let set = try await ProducerHarness.run("/usr/sbin/chpasswd", [], stdin: "\(stack.user):\(stack.password)\n")
        try #require(set.status == 0, "\(String(decoding: set.stderr, as: UTF8.self))")
        let command = [
            ProducerHarness.product("auditctl"), "pam", "--socket", stack.state + "/ingest.sock", "--buffer-file",
            directory.file("pam.buffer"), "--attempts-file", directory.file("pam.attempts"), "--timeout-ms", "10000",
        ].joined(separator: " ")
        let lines = """
            auth [success=2 default=ignore] pam_unix.so nullok nodelay
            auth optional pam_exec.so quiet seteuid \(command) --outcome failure
            auth requisite pam_deny.so
            auth optional pam_exec.so quiet seteuid \(command) --outcome success
            auth required pam_permit.so
            account required pam_permit.so
            session required pam_permit.so

            """
        try Data(lines.utf8).write(to: URL(fileURLWithPath: serviceFile))
        let agent = try await ProducerHarness.startAgent(stack.state, output: directory.file("agent.log"))
        defer { agent.end() }
        try await body(stack)
        await ProducerHarness.stop(agent)
    }

    @Test("pam_unix's success and wrong password are sealed once each, with service and remote host")
    func systemStack() async throws {
        try await Self.withThrowawayStack { stack in
            func authenticate(_ secret: String) async throws -> Int32 {
                try await ProducerHarness.run(
                    "/usr/bin/pamtester",
                    ["-I", "rhost=198.51.100.4", stack.service, stack.user, "authenticate"],
                    stdin: secret + "\n"
                ).status
            }
            #expect(try await authenticate("wrong") != 0)
            #expect(try await authenticate(stack.password) == 0)
            let events = try await ProducerHarness.events(stack.state)
            #expect(events.map(\.type) == ["PASSWORD_AUTH_FAILURE", "PASSWORD_AUTH_SUCCESS"])
            #expect(events.allSatisfy { $0.userId == stack.user && $0.attributes["service"] == .string(stack.service) })
            #expect(events.allSatisfy { $0.attributes["remoteHost"] == "198.51.100.4" })
            #expect(events.map { $0.attributes["attemptCount"] } == [1, 2])
            #expect(try await ProducerHarness.verifies(stack.state))
        }
    }

    @Test(
        "sudo through the same stack: a wrong password and the right one, recorded for the invoking user",
        .enabled(if: ProducerHarness.mustRun(["/usr/bin/sudo", "/usr/sbin/visudo", "/usr/sbin/runuser"]))
    )
    func sudo() async throws {
        try await Self.withThrowawayStack { stack in
            // sudo's PAM service is chosen per user in sudoers: checked by visudo before it is put in place (a
            // broken sudoers.d file would break sudo for the whole machine), removed afterwards.
            let rules = """
                Defaults:\(stack.user) pam_service=\(stack.service), passwd_tries=1, !lecture
                \(stack.user) ALL=(root) /usr/bin/true

                """
            let draft = stack.directory.file("sudoers")
            try Data(rules.utf8).write(to: URL(fileURLWithPath: draft))
            let checked = try await ProducerHarness.run("/usr/sbin/visudo", ["-cf", draft])
            try #require(checked.status == 0, "\(String(decoding: checked.stdout + checked.stderr, as: UTF8.self))")
            let installed = "/etc/sudoers.d/" + stack.service
            defer { unlink(installed) }
            chmod(draft, 0o440)
            try #require(rename(draft, installed) == 0 || link(draft, installed) == 0)
            func sudo(_ secret: String) async throws -> Int32 {
                try await ProducerHarness.run(
                    "/usr/sbin/runuser",
                    ["-u", stack.user, "--", "/usr/bin/sudo", "-S", "-k", "/usr/bin/true"],
                    stdin: secret + "\n"
                ).status
            }
            #expect(try await sudo("wrong") != 0)
            #expect(try await sudo(stack.password) == 0)
            let events = try await ProducerHarness.events(stack.state)
            #expect(events.map(\.type) == ["PASSWORD_AUTH_FAILURE", "PASSWORD_AUTH_SUCCESS"])
            #expect(events.allSatisfy { $0.userId == stack.user && $0.attributes["service"] == .string(stack.service) })
            #expect(events.map { $0.attributes["attemptCount"] } == [1, 2])
            #expect(try await ProducerHarness.verifies(stack.state))
        }
    }
}
