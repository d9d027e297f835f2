import ArgumentParser
import AuditWitness
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `auditd witness`: a minimal c2sp.org/tlog-witness witness of one collector's logs (docs/WITNESS.md).
/// It cosigns each checkpoint it can prove consistent with the last one it cosigned for the log.
struct WitnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "witness",
        abstract: "Run a transparency log witness of a collector's logs (POST /add-checkpoint, c2sp.org/tlog-witness).",
        discussion: """
            Accepts the origins <log-name>/<32 lowercase hex> whose checkpoint verifies with the collector's key,
            and prints its verifier key (vkey) at start: give it to agents (--witness-key) and to the collector
            (--witness URL=VKEY).
            """
    )

    @Option(help: "Address to listen on, HOST:PORT (port 0 picks a free port).")
    var listen = "127.0.0.1:8090"

    @Option(help: "The witness's SQLite database (its state: the latest cosigned checkpoint of each log).")
    var db: String

    @Option(help: "Cosigning key file (32-byte Ed25519 seed, mode 0600; created if missing).")
    var key: String

    @Option(help: "The witness's key name, in its cosignature lines (a schema-less URL, e.g. witness.example/w1).")
    var name: String

    @Option(help: "The collector's name (auditd collector --name): origins <log-name>/<32 hex> are witnessed.")
    var logName: String

    @Option(help: "The collector's key file: GET /v1/collector/key saved, or 64 hex digits.")
    var logKey: String

    func run() async throws {
        umask(0o077)
        var settings = WitnessConfiguration(
            databasePath: db,
            keyPath: key,
            name: name,
            logName: logName,
            logKeyPath: logKey
        )
        let logger = Logger(label: "auditd.witness")
        let server: WitnessServer
        do {
            try settings.setListen(listen)
            server = try settings.makeServer(logger: logger)
        } catch {
            FileHandle.standardError.write(Data("auditd witness: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        FileHandle.standardError.write(
            Data("auditd witness: vkey \(server.witness.vkey)\n".utf8)
        )
        let host = settings.host
        try await server.runUntilSignalled { port in
            FileHandle.standardError.write(Data("auditd witness: listening on \(host):\(port)\n".utf8))
        }
    }
}
