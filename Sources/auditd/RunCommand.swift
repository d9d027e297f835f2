import ArgumentParser
import AuditAgent
import AuditServerKit
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `auditd run`: the agent. Settings come from `--config FILE` (JSON), then the environment, then these flags
/// (docs/OPERATIONS.md section 1.1 lists them all).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent: ingest API (unix socket, optional loopback TCP), sync loop, metrics.",
        discussion: """
            Settings: defaults < --config FILE (JSON, or $AUDITD_CONFIG) < environment (AUDITD_*) < flags.
            Without --backend, events are only kept in the local encrypted log (delivery off).
            Stops gracefully on SIGTERM or SIGINT (bounded by --shutdown-timeout-seconds) and exits 0.
            """
    )

    @Option(help: "JSON configuration file (default: $AUDITD_CONFIG).") var config: String?
    @Option(help: "State directory (default: $AUDIT_STATE_DIR, else ./.audit).") var stateDir: String?
    @Option(help: "Device id of a newly created log (default: the host name).") var deviceId: String?
    @Option(help: "A catalogue file adding event types.") var catalogue: String?
    @Option(help: "Backend base URL, e.g. http://127.0.0.1:8080 (unset: delivery off).") var backend: String?
    @Option(help: "Bearer token (visible in the process list: prefer --token-file).") var token: String?
    @Option(help: "File holding the bearer token (mode 0600; refused if group/others can read it).")
    var tokenFile: String?
    @Option(help: "The collector's receipt key: GET /v1/collector/key saved, or 64 hex (default: pinned at first use).")
    var collectorKey: String?
    @Option(help: "CA bundle (PEM) an https backend's certificate must chain to (default: the system's roots).")
    var caFile: String?
    @Option(
        help: """
            Pin of the collector's key: base64 SHA-256 of its certificate's DER SubjectPublicKeyInfo (RFC 7469 \
            pin-sha256), checked besides the CA; repeatable, one must match.
            """
    )
    var pinSha256: [String] = []
    @Option(help: "Client certificate chain (PEM) for a collector that requires mTLS.") var tlsClientCert: String?
    @Option(help: "Its private key (PEM, mode 0600; refused if group/others can read it).") var tlsClientKey: String?
    @Flag(help: "Allow an http:// backend that is not on loopback (token and metadata in clear).")
    var allowPlainHttp = false
    @Option(
        help:
            "A witness's verifier key (auditd witness prints it) whose cosignature checkpoints must carry; repeatable."
    )
    var witnessKey: [String] = []
    @Option(help: "How many of the --witness-key witnesses must cosign each checkpoint (default: all).")
    var witnessQuorum: String?
    @Option(help: "Unix ingest socket, mode 0660 (default <state-dir>/ingest.sock; 'off' disables).")
    var socket: String?
    @Option(help: "Loopback TCP ingest address HOST:PORT (default off).") var listen: String?
    @Option(help: "Prometheus metrics address HOST:PORT, serving GET /metrics (default off).") var metrics: String?
    @Flag(help: "Allow non-loopback --listen/--metrics (no TLS, no authentication).") var allowRemoteListen = false
    @Option(help: "Largest ingest request body in bytes (default 1048576).") var maxBodyBytes: String?
    @Option(help: "Seconds a new connection has to send a request head (default 10).") var headerTimeoutSeconds: String?
    @Option(help: "Seconds a request has to send its body, from its head (default 30).") var bodyTimeoutSeconds: String?
    @Option(help: "Seconds an idle keep-alive connection is kept (default 75).") var idleTimeoutSeconds: String?
    @Option(help: "Connections per ingest listener, unix and TCP each (default 256).") var maxConnections: String?
    @Option(help: "TCP connections per remote address (default 64; 0: no limit).") var maxConnectionsPerPeer: String?
    @Option(help: "Connections of the metrics listener (default 16).") var metricsMaxConnections: String?
    @Option(help: "Pending entries at most; the oldest leave first (default 1000).") var maxEvents: String?
    @Option(help: "Pending entries expire after this many hours (default 72).") var maxAgeHours: String?
    @Option(help: "Retryable rejections before the dead-letter queue (default 10).") var maxAttempts: String?
    @Option(help: "Dead-letter entries at most (default 100).") var maxDeadLetters: String?
    @Option(help: "Entries per request (default 1000).") var batchSize: String?
    @Option(help: "Prune delivered entries after this many hours (default off).") var retentionHours: String?
    @Option(help: "Pending entries that make health degraded (default 500).") var degradedPending: String?
    @Option(help: "Entries not covered by a verified receipt that make health degraded (default 1000).")
    var degradedLag: String?
    @Option(help: "Seconds the oldest entry may wait for a verified receipt before health is degraded (default 300).")
    var degradedLagAgeSeconds: String?
    @Option(help: "Hours of outage before fail-open (default 6).") var failOpenAfterHours: String?
    @Option(help: "Probe interval in fail-open, seconds (default 300).") var probeIntervalSeconds: String?
    @Option(help: "Longest Retry-After honoured, seconds (default 3600).") var maxRetryAfterSeconds: String?
    @Option(help: "Backoff delays, comma-separated seconds (default 1,5,30,60,300).") var retryScheduleSeconds: String?
    @Option(help: "Backoff jitter fraction, 0...1 (default 0.2).") var jitter: String?
    @Option(help: "Wall-clock jump tolerance, seconds (default 300).") var clockJumpToleranceSeconds: String?
    @Option(help: "Deadline of one backend request, seconds (default 30).") var requestTimeoutSeconds: String?
    @Option(help: "Idle sync loop interval, seconds (default 2).") var syncIntervalSeconds: String?
    @Option(help: "Epoch length, seconds: the signing key is replaced and erased then (default 600).")
    var epochSeconds: String?
    @Option(help: "Format version of a new log: 2 (epochs, forward-secure keys; the default) or 1.")
    var formatVersion: String?
    @Flag(help: "A new version 2 log seals each event with a user id under its subject's key (erasable per subject).")
    var subjectKeys = false
    @Option(help: "Bound on graceful shutdown, seconds (default 10).") var shutdownTimeoutSeconds: String?
    @Option(help: "trace, debug, info, notice, warning, error, critical (default info).") var logLevel: String?
    @Option(help: "logfmt or json (default logfmt).") var logFormat: String?

    /// The flags given, by setting key.
    var flags: [String: String] {
        let values: [String: String?] = [
            "stateDir": stateDir, "deviceId": deviceId, "catalogue": catalogue, "backend": backend, "token": token,
            "tokenFile": tokenFile, "collectorKey": collectorKey, "caFile": caFile,
            "pinSha256": pinSha256.isEmpty ? nil : pinSha256.joined(separator: " "), "tlsClientCert": tlsClientCert,
            "tlsClientKey": tlsClientKey, "allowPlainHttp": allowPlainHttp ? "true" : nil,
            "witnessKey": witnessKey.isEmpty ? nil : witnessKey.joined(separator: " "), "witnessQuorum": witnessQuorum,
            "socket": socket, "listen": listen,
            "metrics": metrics,
            "allowRemoteListen": allowRemoteListen ? "true" : nil, "maxBodyBytes": maxBodyBytes,
            "headerTimeoutSeconds": headerTimeoutSeconds, "bodyTimeoutSeconds": bodyTimeoutSeconds,
            "idleTimeoutSeconds": idleTimeoutSeconds, "maxConnections": maxConnections,
            "maxConnectionsPerPeer": maxConnectionsPerPeer, "metricsMaxConnections": metricsMaxConnections,
            "maxEvents": maxEvents, "maxAgeHours": maxAgeHours, "maxAttempts": maxAttempts,
            "maxDeadLetters": maxDeadLetters, "batchSize": batchSize, "retentionHours": retentionHours,
            "degradedPending": degradedPending, "degradedLag": degradedLag,
            "degradedLagAgeSeconds": degradedLagAgeSeconds, "failOpenAfterHours": failOpenAfterHours,
            "probeIntervalSeconds": probeIntervalSeconds, "maxRetryAfterSeconds": maxRetryAfterSeconds,
            "retryScheduleSeconds": retryScheduleSeconds, "jitter": jitter,
            "clockJumpToleranceSeconds": clockJumpToleranceSeconds, "requestTimeoutSeconds": requestTimeoutSeconds,
            "syncIntervalSeconds": syncIntervalSeconds, "shutdownTimeoutSeconds": shutdownTimeoutSeconds,
            "epochSeconds": epochSeconds, "formatVersion": formatVersion,
            "subjectKeys": subjectKeys ? "true" : nil,
            "logLevel": logLevel, "logFormat": logFormat,
        ]
        return values.compactMapValues { $0 }
    }

    func run() async throws {
        // Files this process creates (log, socket before its chmod) are private by default.
        umask(0o077)
        let agent: Agent
        do {
            let settings = try AgentConfiguration.resolve(
                configFile: config,
                environment: ProcessInfo.processInfo.environment,
                flags: flags
            )
            LoggingSystem.bootstrap { label in
                StructuredLogHandler(label: label, level: settings.logLevel, format: settings.logFormat)
            }
            let logger = Logger(label: "auditd")
            if token != nil {
                logger.warning(
                    "the token was given on the command line, where other users can see it; use --token-file"
                )
            }
            agent = try await Agent(configuration: settings, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("auditd: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        do {
            try await agent.runUntilSignalled()
        } catch {
            let started = agent.listening
            agent.logger.critical("the agent stopped on an error", metadata: ["error": "\(error)"])
            let bound =
                (agent.configuration.effectiveSocketPath == nil || started.socketPath != nil)
                && (agent.configuration.listen == nil || started.tcpPort != nil)
                && (agent.configuration.metrics == nil || started.metricsPort != nil)
            FileHandle.standardError.write(
                Data("auditd: \(bound ? "stopped on an error" : "could not start its listeners"): \(error)\n".utf8)
            )
            throw ExitCode(bound ? 1 : 2)
        }
        agent.logger.info("stopped")
    }
}
