import Foundation
import TestKit

/// A PAM stack of Debian's common-auth shape run without root through pam_wrapper: pam_matrix's password file
/// (alice:secret), a failure recorder, `requisite pam_deny.so`, a success recorder, `required pam_permit.so`; the
/// recorders are `auditctl pam` through `pam_exec.so quiet`.
struct PAMStack {
    static let wrapperModules = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
    static let systemModules = "/usr/lib/x86_64-linux-gnu/security"
    /// The programs and modules the stack needs (Debian: pamtester, libpam-wrapper, libpam-modules).
    static let programs = [
        "/usr/bin/pamtester", "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so", wrapperModules + "/pam_matrix.so",
        systemModules + "/pam_exec.so",
    ]
    /// The service name, also the stack's file name.
    static let service = "audittest"

    let directory: ShortTemporaryDirectory
    /// The agent's state directory.
    var state: String { directory.file("agent") }

    /// `auditctl pam`'s arguments in the stack, but the outcome.
    var pamArguments: [String] {
        [
            "pam", "--socket", state + "/ingest.sock", "--buffer-file", directory.file("pam.buffer"),
            "--attempts-file", directory.file("pam.attempts"), "--device-id", "host-1",
            // The bound is the setting's business, not the tests': on a loaded machine 200 ms may pass before the
            // agent answers, and the event would wait for the next run instead of being there to check.
            "--timeout-ms", "10000",
        ]
    }

    init() throws {
        directory = try ShortTemporaryDirectory(prefix: "pamw")
        try FileManager.default.createDirectory(atPath: directory.file("services"), withIntermediateDirectories: true)
        try Data("alice:secret:\(Self.service)\n".utf8).write(to: URL(fileURLWithPath: directory.file("passdb")))
        let matrix = "\(Self.wrapperModules)/pam_matrix.so passdb=\(directory.file("passdb"))"
        let command = ([ProducerHarness.product("auditctl")] + pamArguments).joined(separator: " ")
        let stack = """
            auth [success=2 default=ignore] \(matrix)
            auth optional \(Self.systemModules)/pam_exec.so quiet \(command) --outcome failure
            auth requisite \(Self.systemModules)/pam_deny.so
            auth optional \(Self.systemModules)/pam_exec.so quiet \(command) --outcome success
            auth required \(Self.systemModules)/pam_permit.so
            account required \(matrix)

            """
        try Data(stack.utf8).write(to: URL(fileURLWithPath: directory.file("services/\(Self.service)")))
    }

    /// pamtester's `authenticate` for `user` from 192.0.2.7 with `password` on its standard input; its exit status
    /// (0 authenticated).
    func authenticate(_ user: String, password: String) async throws -> Int32 {
        var environment = ProducerHarness.environment
        environment["LD_PRELOAD"] = "libpam_wrapper.so"
        environment["PAM_WRAPPER"] = "1"
        environment["PAM_WRAPPER_SERVICE_DIR"] = directory.file("services")
        let result = try await ProducerHarness.run(
            "/usr/bin/pamtester",
            ["-I", "rhost=192.0.2.7", Self.service, user, "authenticate"],
            environment: environment,
            stdin: password + "\n"
        )
        return result.status
    }
}
