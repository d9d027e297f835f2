import ArgumentParser
import AuditChain
import AuditSupport
import Foundation
import LinuxProducers

#if canImport(Glibc)
import Glibc
#endif

/// `auditctl pam`: what `pam_exec.so quiet seteuid` runs on a PAM stack's success or failure line
/// (docs/PRODUCERS.md). Always exits 0, within its bound of time, so that the agent being down never breaks or
/// slows a login past the bound.
struct PamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pam",
        abstract: "Record a PAM authentication or session (run by pam_exec.so); always exits 0.",
        discussion: """
            Reads PAM_USER, PAM_SERVICE, PAM_RHOST, PAM_TTY and PAM_TYPE only (never the password: do not give \
            pam_exec expose_authtok). --outcome success or failure sends PASSWORD_AUTH_SUCCESS or \
            PASSWORD_AUTH_FAILURE (attempts counted per user and service with --attempts-file), open or close \
            SESSION_OPENED or SESSION_CLOSED. Bounded by --timeout-ms: what is not delivered in time waits in \
            --buffer-file for the next run, or is reported dropped on standard error.
            """
    )

    @Option(help: "The agent's ingest socket.") var socket: String
    @Option(help: "success, failure, open or close.") var outcome: String
    @Option(help: "Bound on the whole run in milliseconds (1...10000).") var timeoutMs = 200
    @Option(help: "Buffer file for events not delivered in time (mode 0600).") var bufferFile: String?
    @Option(help: "File of failed attempts per user and service (mode 0600).") var attemptsFile: String?
    @Option(help: "This host's device id (default: the host name).") var deviceId: String?

    func run() async throws {
        umask(0o077)
        guard let outcome = PAMRequest.Outcome(rawValue: outcome) else {
            Self.say("--outcome must be success, failure, open or close, not \(outcome); nothing recorded")
            return
        }
        guard (1...10_000).contains(timeoutMs) else {
            Self.say("--timeout-ms must be 1...10000; nothing recorded")
            return
        }
        var settings = PAMReporter.Configuration(socketPath: socket)
        settings.timeout = .milliseconds(timeoutMs)
        settings.bufferFile = bufferFile
        settings.attemptsFile = attemptsFile
        if let deviceId { settings.deviceId = deviceId }
        // The last resort of the bound: whatever still runs 50 ms past it, the process ends with 0 (the buffer
        // file is replaced by rename, so it is whole at any instant).
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeoutMs + 50)) {
            Self.say("out of time; ending")
            _exit(0)
        }
        let environment = ProcessInfo.processInfo.environment.filter { PAMRequest.variables.contains($0.key) }
        let request = PAMRequest(outcome: outcome, environment: environment)
        let (event, result) = await PAMReporter(configuration: settings).report(request)
        switch result {
        case .delivered:
            break
        // Neither the user nor the type is said: they are what the log encrypts (docs/threat_model.md).
        case .buffered(let reason):
            Self.say("event \(event.idempotencyKey) kept for later: \(reason)")
        case .dropped(let reason):
            Self.say("dropped event \(event.idempotencyKey): \(reason)")
        }
    }

    private static func say(_ line: String) {
        FileHandle.standardError.write(Data("auditctl pam: \(line)\n".utf8))
    }
}
