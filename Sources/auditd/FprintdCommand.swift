import ArgumentParser
import AuditSupport
import Foundation
import LinuxProducers
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// `auditd fprintd`: watches fprintd on D-Bus and sends its fingerprint events to the agent (docs/PRODUCERS.md).
struct FprintdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fprintd",
        abstract: "Watch fprintd on D-Bus and send fingerprint enroll / delete / verify events to the agent.",
        discussion: """
            Runs `busctl monitor --json=short` (systemd's busctl; a passive monitor, so fprintd never waits on it; \
            it needs the right to monitor the bus: root on the system bus) and sends BIOMETRIC_ENABLED, \
            BIOMETRIC_DISABLED, BIOMETRIC_AUTH_SUCCESS and BIOMETRIC_AUTH_FAILURE to the agent's socket. \
            Reconnects when the bus goes away, follows fprintd's restarts, and says so on standard error and in \
            --status-file. Stops on SIGTERM or SIGINT and exits 0.
            """
    )

    @Option(help: "The agent's ingest socket (<state-dir>/ingest.sock).")
    var socket: String

    @Option(help: "The bus to watch (unix:path=...); the system bus when absent.")
    var bus: String?

    @Option(help: "The busctl program.")
    var busctl = "/usr/bin/busctl"

    @Option(help: "Prefix of the events' device id, before the reader's path (default <host>/fprintd/).")
    var deviceIdPrefix: String?

    @Option(help: "Buffer file for events the agent has not taken yet (mode 0600); in memory when absent.")
    var bufferFile: String?

    @Option(help: "A JSON file of its health (bus, fprintd, counts), rewritten at every change and every second.")
    var statusFile: String?

    func run() async throws {
        umask(0o077)
        var settings = FprintdWatcherConfiguration(socketPath: socket)
        settings.busAddress = bus
        settings.busctlPath = busctl
        if let deviceIdPrefix { settings.deviceIdPrefix = deviceIdPrefix }
        settings.bufferFile = bufferFile
        settings.statusFile = statusFile
        let watcher: FprintdWatcher
        do {
            watcher = try FprintdWatcher(configuration: settings) { line in
                FileHandle.standardError.write(Data("auditd fprintd: \(line)\n".utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("auditd fprintd: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let logger = Logger(label: "auditd.fprintd")
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: watcher)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
