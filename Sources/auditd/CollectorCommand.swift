import AuditSupport
import ArgumentParser
import AuditCollector
import AuditServerKit
import Foundation
import Logging
import Synchronization

/// `auditd collector`: the reference backend. Verifies, de-duplicates and stores delivered entries and
/// answers with signed receipts (docs/PROTOCOL.md); `/healthz`, `/readyz`, metrics, structured logs and a drain on
/// SIGTERM make it a fleet service (docs/PROTOCOL.md section 7).
struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collector",
        abstract: "Run the reference audit collector (verifies, de-duplicates, stores, signs receipts).",
        discussion: """
            GET /healthz and GET /readyz answer without a token (load balancers). SIGTERM or SIGINT drains: /readyz \
            answers 503, the listener stops accepting after --drain-delay-seconds, in-flight requests finish \
            within --drain-timeout-seconds, then the collector exits 0.
            """
    )

    @Option(help: "Address to listen on, HOST:PORT (port 0 picks a free port).")
    var listen = "127.0.0.1:8080"

    @Option(
        help: ArgumentHelp(
            "The collector's database: a SQLite file, or postgres://USER@HOST[:PORT]/DB[?sslmode=…] shared by "
                + "several replicas.",
            discussion: "For PostgreSQL, what the URL leaves out comes from libpq's variables (PGHOST, PGPORT, "
                + "PGUSER, PGDATABASE, PGSSLMODE, PGSSLROOTCERT, PGPASSWORD); prefer --postgres-password-file to a "
                + "password in the URL or the environment (docs/COLLECTOR.md)."
        )
    )
    var db: String?

    @Option(help: "The PostgreSQL database, postgres://… (the same as --db with a postgres:// URL).")
    var postgresUrl: String?

    @Option(help: "File holding the PostgreSQL password (mode 0600; refused if group/others can read it).")
    var postgresPasswordFile: String?

    @Option(help: "Connections to PostgreSQL this replica holds at most (default 16).")
    var postgresConnections: Int?

    @Option(
        help: ArgumentHelp(
            "Bearer token required on every request (visible in the process list: prefer --token-file; "
                + "default: $AUDITD_COLLECTOR_TOKEN, else none).",
            valueName: "token"
        )
    )
    var token: String?

    @Option(help: "File holding the bearer token (mode 0600; refused if group/others can read it).")
    var tokenFile: String?

    @Option(
        help: ArgumentHelp(
            "File holding a token that opens the read API but not ingest (mode 0600; refused if group/others can "
                + "read it).",
            discussion: "The read API: head, checkpoint, tiles, entry bundles, proofs and the collector's key. "
                + "The ingest token opens it too. Without this flag or --public-read, reads take the ingest token."
        )
    )
    var readTokenFile: String?

    @Flag(help: "Open the read API (head, checkpoint, tiles, entry bundles, proofs, key) to anyone, with no token.")
    var publicRead = false

    @Option(help: "Seconds a new connection has to send a complete request head (default 10).")
    var headerTimeoutSeconds: Double?

    @Option(help: "Seconds a request has to send its whole body, from its head (default 30).")
    var bodyTimeoutSeconds: Double?

    @Option(help: "Seconds an idle keep-alive connection is kept after its last response (default 75).")
    var idleTimeoutSeconds: Double?

    @Option(help: "Connections held at most (default 512; see docs/threat_model.md for the file limit).")
    var maxConnections: Int?

    @Option(help: "Connections held at most per remote IP address (default 32; 0 for no per-peer limit).")
    var maxConnectionsPerPeer: Int?

    @Option(help: "Incidents (forks, chain breaks) kept as evidence per log; the rest are counted (default 1000).")
    var maxIncidentsPerLog: Int?

    @Option(help: "Batches that share one write transaction at most (group commit; default 64).")
    var groupBatches: Int?

    @Option(help: "Group transactions running at once (default 1 on SQLite, 4 on PostgreSQL).")
    var concurrentGroups: Int?

    @Option(help: "Receipt key file (32-byte Ed25519 seed, mode 0600; created if missing; default <db>.collector.key).")
    var key: String?

    @Option(
        help: ArgumentHelp(
            "A device public key file (auditctl keys export-public) to trust; repeatable.",
            discussion: "Without any, the genesis key of each log is pinned on first sight (trust on first use)."
        )
    )
    var trust: [String] = []

    @Option(help: "The name in each log's checkpoint origin, <name>/<log id hex> (default audit-collector.localhost).")
    var name: String?

    @Option(
        help: ArgumentHelp(
            "A witness that cosigns each version 2 answer's checkpoint, URL=VKEY; repeatable.",
            discussion: "URL is its submission prefix (POST URL/add-checkpoint, c2sp.org/tlog-witness) and VKEY its "
                + "cosignature verifier key, which `auditd witness` prints. A witness that is down or refuses costs "
                + "its cosignature, never the answer (a warning is logged).",
            valueName: "URL=VKEY"
        )
    )
    var witness: [String] = []

    @Option(help: "Seconds one witness request may take (default 5).")
    var witnessTimeoutSeconds: Double?

    @Option(help: "TLS certificate chain, PEM (serve HTTPS; re-read on SIGHUP).")
    var tlsCert: String?

    @Option(help: "TLS private key, PEM (mode 0600; refused if group/others can read it; re-read on SIGHUP).")
    var tlsKey: String?

    @Option(help: "CA bundle, PEM: require client certificates that chain to it (mTLS).")
    var clientCa: String?

    @Flag(
        help: "Allow plain HTTP on a non-loopback --listen address (default: refused without --tls-cert) or --metrics."
    )
    var allowPlainHttp = false

    @Option(help: "Prometheus metrics address HOST:PORT, serving GET /metrics, /healthz, /readyz (default off).")
    var metrics: String?

    @Option(help: "Seconds in-flight requests have to finish after SIGTERM, once accepting stops (default 10).")
    var drainTimeoutSeconds: Double?

    @Option(help: "Seconds to keep accepting after SIGTERM while /readyz answers 503, for load balancers (default 0).")
    var drainDelaySeconds: Double?

    @Option(help: "Seconds /readyz waits for the database before answering 503 (default 2).")
    var readinessTimeoutSeconds: Double?

    @Option(help: "trace, debug, info, notice, warning, error, critical (default info).")
    var logLevel: String?

    @Option(help: "logfmt or json (default logfmt): one line per event on standard error.")
    var logFormat: String?

    func run() async throws {
        let logger: Logger
        do throws(CollectorError) {
            logger = try bootstrapLogging()
        } catch {
            FileHandle.standardError.write(Data("auditd collector: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        let database: String
        switch (db, postgresUrl) {
        case (let db?, nil): database = db
        case (nil, let url?):
            guard PostgresSettings.isURL(url) else {
                FileHandle.standardError.write(Data("auditd collector: --postgres-url must be postgres://…\n".utf8))
                throw ExitCode(2)
            }
            database = url
        default:
            FileHandle.standardError.write(
                Data(
                    "auditd collector: give the database with --db (a file or postgres:// URL) or --postgres-url\n".utf8
                )
            )
            throw ExitCode(2)
        }
        var settings = CollectorConfiguration(databasePath: database)
        settings.postgresPasswordFile = postgresPasswordFile
        if let postgresConnections { settings.postgresConnections = postgresConnections }
        settings.keyPath = key
        settings.trustFiles = trust
        if let name { settings.name = name }
        settings.tokenFile = tokenFile
        settings.readTokenFile = readTokenFile
        settings.publicRead = publicRead
        if tokenFile == nil {
            settings.token = token ?? ProcessInfo.processInfo.environment["AUDITD_COLLECTOR_TOKEN"]
        } else {
            settings.token = token
        }
        if token != nil {
            logger.warning(
                "the token was given on the command line, where other users can read it (ps); use --token-file"
            )
        }
        if let maxIncidentsPerLog { settings.maxIncidentsPerLog = maxIncidentsPerLog }
        if let groupBatches { settings.groupCommit.maxBatches = groupBatches }
        if let concurrentGroups { settings.groupCommit.concurrentGroups = concurrentGroups }
        settings.tlsCertificateFile = tlsCert
        settings.tlsKeyFile = tlsKey
        settings.clientCAFile = clientCa
        settings.allowPlainHTTP = allowPlainHttp
        // The PostgreSQL pool runs in the server's service group (runUntilSignalled), stopped after the listeners.
        settings.postgresPoolRunner = .service
        let server: CollectorServer
        do throws(CollectorError) {
            try settings.setListen(listen)
            settings.limits = try limits()
            settings.operations = try operations()
            for text in witness { settings.witnesses.append(try WitnessEndpoint(parsing: text)) }
            if let witnessTimeoutSeconds {
                guard
                    let timeout = DurationFlag.duration(
                        seconds: witnessTimeoutSeconds,
                        in: DurationFlag.positive(below: 3600)
                    )
                else {
                    throw CollectorError(.invalidConfiguration, "--witness-timeout-seconds must be between 0 and 3600")
                }
                settings.witnessTimeout = timeout
            }
            server = try await CollectorServer(configuration: settings, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("auditd collector: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        do {
            try await serve(server, settings)
        } catch {
            await server.collector.store.close()
            throw error
        }
        await server.collector.store.close()
    }

    /// Runs the server until it has drained; exits 1 when it fails while running, 2 when it cannot start.
    func serve(_ server: CollectorServer, _ settings: CollectorConfiguration) async throws {
        let logger = server.logger
        let address = CollectorOperations.Address(host: settings.host, port: settings.port)
        let bound = BoundFlag()
        logger.info(
            "starting",
            metadata: [
                "listen": "\(address)", "tls": "\(settings.tlsCertificateFile != nil)",
                "metrics": "\(settings.operations.metrics.map { "\($0)" } ?? "off")",
                "token": "\(settings.token != nil || settings.tokenFile != nil ? "set" : "none")",
            ]
        )
        do {
            try await server.runUntilSignalled(
                onRunning: { port in
                    bound.set()
                    // "listening on HOST:PORT" in the message: scripts and tests read the bound port from it.
                    logger.info(
                        "listening on \(CollectorOperations.Address(host: address.host, port: port))",
                        metadata: ["listener": "api", "port": "\(port)"]
                    )
                },
                onMetricsRunning: { port in
                    logger.info("metrics listening", metadata: ["listener": "metrics", "port": "\(port)"])
                }
            )
        } catch {
            logger.critical("the collector stopped on an error", metadata: ["error": "\(error)"])
            let started = bound.isSet
            FileHandle.standardError.write(
                Data(
                    "auditd collector: \(started ? "stopped on an error" : "could not start its listeners"): \(error)\n"
                        .utf8
                )
            )
            throw ExitCode(started ? 1 : 2)
        }
        logger.info("stopped")
    }

    /// Reads `--log-level` and `--log-format` and sends every logger to ``StructuredLogHandler`` (as the agent does).
    func bootstrapLogging() throws(CollectorError) -> Logger {
        let level =
            try logLevel.map { text throws(CollectorError) in
                guard let level = Logger.Level(rawValue: text.lowercased()) else {
                    throw CollectorError(.invalidConfiguration, "--log-level: unknown level \"\(text)\"")
                }
                return level
            } ?? .info
        let format =
            try logFormat.map { text throws(CollectorError) in
                guard let format = StructuredLogHandler.Format(rawValue: text) else {
                    throw CollectorError(.invalidConfiguration, "--log-format must be logfmt or json, got \"\(text)\"")
                }
                return format
            } ?? .logfmt
        LoggingSystem.bootstrap { label in StructuredLogHandler(label: label, level: level, format: format) }
        return Logger(label: "auditd.collector")
    }

    /// The metrics listener, readiness and drain settings: the defaults, overridden by the flags given.
    func operations() throws(CollectorError) -> CollectorOperations {
        var operations = CollectorOperations()
        if let metrics { operations.metrics = try CollectorOperations.Address(parsing: metrics, flag: "--metrics") }
        func duration(
            _ name: String,
            _ seconds: Double?,
            _ range: ClosedRange<Double>
        ) throws(CollectorError)
            -> Duration?
        {
            guard let seconds else { return nil }
            guard let duration = DurationFlag.duration(seconds: seconds, in: range) else {
                throw CollectorError(
                    .invalidConfiguration,
                    "\(name) must be between \(range.lowerBound) and \(range.upperBound) seconds"
                )
            }
            return duration
        }
        if let timeout = try duration("--drain-timeout-seconds", drainTimeoutSeconds, 0.001...3600) {
            operations.drainTimeout = timeout
        }
        if let delay = try duration("--drain-delay-seconds", drainDelaySeconds, 0...3600) {
            operations.drainDelay = delay
        }
        if let timeout = try duration("--readiness-timeout-seconds", readinessTimeoutSeconds, 0.001...60) {
            operations.readinessTimeout = timeout
        }
        return operations
    }

    /// The listener's limits: the defaults, overridden by the flags given.
    func limits() throws(CollectorError) -> ServerLimits {
        var limits = ServerLimits()
        for (name, value, timeout) in [
            ("--header-timeout-seconds", headerTimeoutSeconds, \ServerLimits.headerTimeout),
            ("--body-timeout-seconds", bodyTimeoutSeconds, \ServerLimits.bodyTimeout),
            ("--idle-timeout-seconds", idleTimeoutSeconds, \ServerLimits.idleTimeout),
        ] {
            guard let value else { continue }
            guard let duration = DurationFlag.duration(seconds: value, in: DurationFlag.positive(below: 1e9)) else {
                throw CollectorError(.invalidConfiguration, "\(name) must be a positive number of seconds")
            }
            limits[keyPath: timeout] = duration
        }
        if let maxConnections { limits.maxConnections = maxConnections }
        if let maxConnectionsPerPeer {
            limits.maxConnectionsPerPeer = maxConnectionsPerPeer == 0 ? nil : maxConnectionsPerPeer
        }
        if let problem = limits.problem { throw CollectorError(.invalidConfiguration, problem) }
        return limits
    }
}

/// Whether the API listener was bound (so a failure after it is "stopped on an error", exit 1).
private final class BoundFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
