import AuditChain
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `auditctl pam` in the system's own PAM, as root (CI runs as root): a throwaway user and a service file of its
/// own in /etc/pam.d with Debian's common-auth shape around pam_unix, driven by pamtester. Both are removed
/// afterwards whatever happens (defer), and the names are unique, so nothing of the machine's PAM is touched.
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
    @Test("pam_unix's success and wrong password are sealed once each, with service and remote host")
    func systemStack() async throws {
        let directory = try ShortTemporaryDirectory(prefix: "spam")
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let user = "acpam\(suffix)"
        let service = "audit-chain-test-\(suffix)"
        let serviceFile = "/etc/pam.d/" + service
        let state = directory.file("agent")
        defer {
            unlink(serviceFile)
            _ = try? ChildProcess.run("/usr/sbin/userdel", [user], environment: [:], stdin: nil, timeout: 60)
        }
        let added = try await ProducerHarness.run("/usr/sbin/useradd", ["-M", "-N", "-s", "/usr/sbin/nologin", user])
        try #require(added.status == 0, "\(String(decoding: added.stderr, as: UTF8.self))")
        let password = "Pw-\(UUID().uuidString)"
        let set = try await ProducerHarness.run("/usr/sbin/chpasswd", [], stdin: "\(user):\(password)\n")
        try #require(set.status == 0, "\(String(decoding: set.stderr, as: UTF8.self))")
        let command = [
            ProducerHarness.product("auditctl"), "pam", "--socket", state + "/ingest.sock", "--buffer-file",
            directory.file("pam.buffer"), "--attempts-file", directory.file("pam.attempts"), "--timeout-ms", "10000",
        ].joined(separator: " ")
        let stack = """
            auth [success=2 default=ignore] pam_unix.so nullok nodelay
            auth optional pam_exec.so quiet seteuid \(command) --outcome failure
            auth requisite pam_deny.so
            auth optional pam_exec.so quiet seteuid \(command) --outcome success
            auth required pam_permit.so
            account required pam_permit.so

            """
        try Data(stack.utf8).write(to: URL(fileURLWithPath: serviceFile))
        let agent = try await ProducerHarness.startAgent(state, output: directory.file("agent.log"))
        defer { agent.end() }
        func authenticate(_ secret: String) async throws -> Int32 {
            try await ProducerHarness.run(
                "/usr/bin/pamtester",
                ["-I", "rhost=198.51.100.4", service, user, "authenticate"],
                stdin: secret + "\n"
            ).status
        }
        #expect(try await authenticate("wrong") != 0)
        #expect(try await authenticate(password) == 0)
        let events = try await ProducerHarness.events(state)
        #expect(events.map(\.type) == ["PASSWORD_AUTH_FAILURE", "PASSWORD_AUTH_SUCCESS"])
        #expect(events.allSatisfy { $0.userId == user && $0.attributes["service"] == .string(service) })
        #expect(events.allSatisfy { $0.attributes["remoteHost"] == "198.51.100.4" })
        #expect(events.map { $0.attributes["attemptCount"] } == [1, 2])
        #expect(try await ProducerHarness.verifies(state))
        await ProducerHarness.stop(agent)
    }
}
