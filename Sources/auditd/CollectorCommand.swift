import ArgumentParser
import AuditCollector
import Foundation
import Logging

/// `auditd collector`: the reference backend. Verifies, de-duplicates and stores delivered entries and
/// answers with signed receipts (docs/PROTOCOL.md).
struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collector",
        abstract: "Run the reference audit collector (verifies, de-duplicates, stores, signs receipts)."
    )

    @Option(help: "Address to listen on, HOST:PORT (port 0 picks a free port).")
    var listen = "127.0.0.1:8080"

    @Option(help: "The collector's SQLite database.")
    var db: String

    @Option(
        help: ArgumentHelp(
            "Bearer token required on every request (default: $AUDITD_COLLECTOR_TOKEN, else none).",
            valueName: "token"
        )
    )
    var token: String?

    @Option(help: "Receipt key file (32-byte Ed25519 seed, mode 0600; created if missing; default <db>.collector.key).")
    var key: String?

    @Option(
        help: ArgumentHelp(
            "A device public key file (auditctl keys export-public) to trust; repeatable.",
            discussion: "Without any, the genesis key of each log is pinned on first sight (trust on first use)."
        )
    )
    var trust: [String] = []

    func run() async throws {
        var settings = CollectorConfiguration(databasePath: db)
        settings.keyPath = key
        settings.trustFiles = trust
        settings.token = token ?? ProcessInfo.processInfo.environment["AUDITD_COLLECTOR_TOKEN"]
        let logger = Logger(label: "auditd.collector")
        let server: CollectorServer
        do {
            try settings.setListen(listen)
            server = try CollectorServer(configuration: settings, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("auditd collector: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        let host = settings.host
        try await server.runUntilSignalled { port in
            FileHandle.standardError.write(Data("auditd collector: listening on \(host):\(port)\n".utf8))
        }
    }
}
