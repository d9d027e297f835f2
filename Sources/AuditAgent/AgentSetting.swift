import AuditChain
import AuditSupport
import AuditServerKit
import AuditHTTPClient
import AuditSync
import Foundation
import Logging
import AuditStore
import TransparencyLog

/// One setting of the agent: its key in the JSON configuration file, its environment variable and its flag.
public struct AgentSetting: Sendable {
    /// The key in the configuration file (and in ``AgentConfiguration/resolve(configFile:environment:flags:)``'s
    /// `flags` dictionary).
    public let key: String
    /// The environment variable.
    public let environment: String
    /// What it sets.
    public let summary: String
    let apply: @Sendable (inout AgentConfiguration, String) throws -> Void

    /// The command-line flag: the key in kebab case (`maxEvents` is `--max-events`).
    public var flag: String {
        "--"
            + key.reduce(into: "") { out, character in
                if character.isUppercase { out += "-" + character.lowercased() } else { out.append(character) }
            }
    }

    init(
        _ key: String,
        _ environment: String,
        _ summary: String,
        apply: @escaping @Sendable (inout AgentConfiguration, String) throws -> Void
    ) {
        self.key = key
        self.environment = environment
        self.summary = summary
        self.apply = apply
    }

    /// Every setting, in the order they are documented.
    public static let all: [AgentSetting] = [
        .init("stateDir", "AUDIT_STATE_DIR", "state directory (default ./.audit)") { $0.stateDirectory = $1 },
        .init("deviceId", "AUDITD_DEVICE_ID", "device id of a new log (default: host name)") { $0.deviceId = $1 },
        .init("catalogue", "AUDITD_CATALOGUE", "catalogue file adding event types") { $0.catalogueFile = $1 },
        .init("backend", "AUDITD_BACKEND", "backend base URL; unset: delivery off") { config, text in
            guard let url = URL(string: text) else { throw ParseFailure("not a URL") }
            config.backend = url
        },
        .init("token", "AUDITD_TOKEN", "backend bearer token (prefer tokenFile)") { config, text in
            config.token = text
            config.tokenFile = nil
        },
        .init("tokenFile", "AUDITD_TOKEN_FILE", "file holding the token, mode 0600") { config, text in
            config.tokenFile = text
            config.token = nil
        },
        .init("collectorKey", "AUDITD_COLLECTOR_KEY", "collector receipt key file (default: pinned at first contact)") {
            $0.collectorKeyFile = $1
        },
        .init("caFile", "AUDITD_CA_FILE", "CA bundle (PEM) trusted for https (default: system roots)") {
            $0.caFile = $1
        },
        .init("pinSha256", "AUDITD_PIN_SHA256", "pins of the collector's key, base64 SHA-256 of its SPKI (repeatable)")
        {
            config,
            text in
            let parts = text.split(whereSeparator: { $0 == " " || $0 == "," || $0.isNewline })
            guard !parts.isEmpty else { throw ParseFailure("expected one or more base64 pins") }
            config.pins = try Set(
                parts.map { part in
                    do {
                        return try CertificatePin(base64: String(part))
                    } catch {
                        throw ParseFailure("\(error)")
                    }
                }
            )
        },
        .init("tlsClientCert", "AUDITD_TLS_CLIENT_CERT", "client certificate (PEM) for mTLS") {
            $0.tlsClientCertificateFile = $1
        },
        .init("tlsClientKey", "AUDITD_TLS_CLIENT_KEY", "client certificate's key (PEM), mode 0600") {
            $0.tlsClientKeyFile = $1
        },
        .init("allowPlainHttp", "AUDITD_ALLOW_PLAIN_HTTP", "allow an http:// backend off loopback") {
            $0.allowPlainHTTP = try bool($1)
        },
        .init("witnessKey", "AUDITD_WITNESS_KEY", "witness vkeys that must cosign checkpoints (space-separated)") {
            config,
            text in
            let parts = text.split(whereSeparator: { $0 == " " || $0 == "," || $0.isNewline })
            config.witnessKeys = try parts.map { part in
                do {
                    return try CosignatureVerifierKey(parsing: String(part))
                } catch {
                    throw ParseFailure("\"\(part)\" is not a witness verifier key: \(error)")
                }
            }
        },
        .init("witnessQuorum", "AUDITD_WITNESS_QUORUM", "witness cosignatures required (default: all keys)") {
            $0.witnessQuorum = try count($1)
        },
        .init("socket", "AUDITD_SOCKET", "unix ingest socket (default <stateDir>/ingest.sock; off)") { config, text in
            config.socketEnabled = text != "off"
            config.socketPath = text == "off" ? nil : text
        },
        .init("listen", "AUDITD_LISTEN", "loopback TCP ingest HOST:PORT (default off)") { config, text in
            config.listen = text == "off" ? nil : try ListenAddress(parsing: text, setting: "listen")
        },
        .init("metrics", "AUDITD_METRICS", "Prometheus metrics HOST:PORT (default off)") { config, text in
            config.metrics = text == "off" ? nil : try ListenAddress(parsing: text, setting: "metrics")
        },
        .init("allowRemoteListen", "AUDITD_ALLOW_REMOTE_LISTEN", "allow non-loopback listeners") {
            $0.allowRemoteListen = try bool($1)
        },
        .init("maxBodyBytes", "AUDITD_MAX_BODY_BYTES", "largest ingest body (default 1048576)") {
            $0.maxBodyBytes = try count($1)
        },
        .init("headerTimeoutSeconds", "AUDITD_HEADER_TIMEOUT_SECONDS", "wait for a request head (default 10)") {
            config,
            text in
            config.limits.headerTimeout = try duration(text, unit: 1, positive: true)
            config.metricsLimits.headerTimeout = config.limits.headerTimeout
        },
        .init("bodyTimeoutSeconds", "AUDITD_BODY_TIMEOUT_SECONDS", "wait for a request body (default 30)") {
            config,
            text in
            config.limits.bodyTimeout = try duration(text, unit: 1, positive: true)
            config.metricsLimits.bodyTimeout = config.limits.bodyTimeout
        },
        .init("idleTimeoutSeconds", "AUDITD_IDLE_TIMEOUT_SECONDS", "keep-alive idle time (default 75)") {
            config,
            text in
            config.limits.idleTimeout = try duration(text, unit: 1, positive: true)
            config.metricsLimits.idleTimeout = config.limits.idleTimeout
        },
        .init("maxConnections", "AUDITD_MAX_CONNECTIONS", "connections per ingest listener (default 256)") {
            $0.limits.maxConnections = try count($1)
        },
        .init("maxConnectionsPerPeer", "AUDITD_MAX_CONNECTIONS_PER_PEER", "TCP connections per IP (64; 0 off)") {
            let value = try count($1, allowZero: true)
            $0.limits.maxConnectionsPerPeer = value == 0 ? nil : value
        },
        .init("metricsMaxConnections", "AUDITD_METRICS_MAX_CONNECTIONS", "metrics connections (default 16)") {
            $0.metricsLimits.maxConnections = try count($1)
        },
        .init("maxEvents", "AUDITD_MAX_EVENTS", "pending entries at most (default 1000)") {
            $0.policy.maxEvents = try count($1)
        },
        .init("maxAgeHours", "AUDITD_MAX_AGE_HOURS", "pending entries expire after (default 72)") {
            $0.policy.maxAge = try duration($1, unit: 3600)
        },
        .init("maxAttempts", "AUDITD_MAX_ATTEMPTS", "retryable rejections before the DLQ (default 10)") {
            $0.policy.maxAttempts = try count($1)
        },
        .init("maxDeadLetters", "AUDITD_MAX_DEAD_LETTERS", "DLQ entries at most (default 100)") {
            $0.policy.maxDeadLetters = try count($1, allowZero: true)
        },
        .init("batchSize", "AUDITD_BATCH_SIZE", "entries per request (default 1000)") {
            $0.policy.batchSize = try count($1)
        },
        .init("retentionHours", "AUDITD_RETENTION_HOURS", "prune delivered entries after (default off)") {
            $0.policy.retention = $1 == "off" ? nil : try duration($1, unit: 3600)
        },
        .init("degradedLag", "AUDITD_DEGRADED_LAG", "entries not covered by a verified receipt: degraded (1000)") {
            $0.policy.degradedLag = try count($1, allowZero: true)
        },
        .init("degradedLagAgeSeconds", "AUDITD_DEGRADED_LAG_AGE_SECONDS", "unreceipted entry age, s: degraded (300)") {
            $0.policy.degradedLagAge = try duration($1, unit: 1)
        },
        .init("degradedPending", "AUDITD_DEGRADED_PENDING", "pending count that makes health degraded (500)") {
            $0.policy.degradedPending = try count($1, allowZero: true)
        },
        .init("failOpenAfterHours", "AUDITD_FAIL_OPEN_AFTER_HOURS", "outage before fail-open (default 6)") {
            $0.policy.failOpenAfter = try duration($1, unit: 3600)
        },
        .init("probeIntervalSeconds", "AUDITD_PROBE_INTERVAL_SECONDS", "fail-open probe interval (default 300)") {
            $0.policy.probeInterval = try duration($1, unit: 1)
        },
        .init("maxRetryAfterSeconds", "AUDITD_MAX_RETRY_AFTER_SECONDS", "longest Retry-After honoured (3600)") {
            $0.policy.maxRetryAfter = try duration($1, unit: 1)
        },
        .init("retryScheduleSeconds", "AUDITD_RETRY_SCHEDULE_SECONDS", "backoff delays (default 1,5,30,60,300)") {
            config,
            text in
            let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !parts.isEmpty else { throw ParseFailure("expected comma-separated seconds, e.g. 1,5,30") }
            config.policy.retrySchedule = try parts.map { try duration($0, unit: 1) }
        },
        .init("jitter", "AUDITD_JITTER", "backoff jitter fraction 0...1 (default 0.2)") { config, text in
            guard let value = Double(text), (0...1).contains(value) else { throw ParseFailure("expected 0...1") }
            config.policy.jitter = value
        },
        .init("clockJumpToleranceSeconds", "AUDITD_CLOCK_JUMP_TOLERANCE_SECONDS", "clock jump tolerance (300)") {
            $0.policy.clockJumpTolerance = try duration($1, unit: 1)
        },
        .init("requestTimeoutSeconds", "AUDITD_REQUEST_TIMEOUT_SECONDS", "backend request deadline (default 30)") {
            $0.requestTimeout = try duration($1, unit: 1)
        },
        .init("syncIntervalSeconds", "AUDITD_SYNC_INTERVAL_SECONDS", "idle sync loop interval (default 2)") {
            $0.syncInterval = try duration($1, unit: 1)
        },
        .init("epochSeconds", "AUDITD_EPOCH_SECONDS", "epoch length: the signing key is replaced then (600)") {
            config,
            text in
            guard let value = UInt64(text), (1...SystemRecord.maxEpochSeconds).contains(value) else {
                throw ParseFailure("expected whole seconds, 1 to \(SystemRecord.maxEpochSeconds)")
            }
            config.epochSeconds = value
        },
        .init("formatVersion", "AUDITD_FORMAT_VERSION", "format version of a new log: 1 or 2 (default 2)") {
            config,
            text in
            guard let value = UInt8(text), value == 1 || value == 2 else { throw ParseFailure("expected 1 or 2") }
            config.formatVersion = value
        },
        .init("subjectKeys", "AUDITD_SUBJECT_KEYS", "a new version 2 log seals events under subject keys (false)") {
            $0.subjectKeys = try bool($1)
        },
        .init("shutdownTimeoutSeconds", "AUDITD_SHUTDOWN_TIMEOUT_SECONDS", "graceful shutdown bound (10)") {
            $0.shutdownTimeout = try duration($1, unit: 1)
        },
        .init("logLevel", "AUDITD_LOG_LEVEL", "trace, debug, info, notice, warning, error (default info)") {
            config,
            text in
            guard let level = Logger.Level(rawValue: text.lowercased()) else { throw ParseFailure("unknown level") }
            config.logLevel = level
        },
        .init("logFormat", "AUDITD_LOG_FORMAT", "logfmt or json (default logfmt)") { config, text in
            guard let format = AgentConfiguration.LogFormat(rawValue: text) else {
                throw ParseFailure("expected logfmt or json")
            }
            config.logFormat = format
        },
    ]

    /// The setting with this key.
    public static func named(_ key: String) -> AgentSetting? { all.first { $0.key == key } }

    struct ParseFailure: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    static func bool(_ text: String) throws -> Bool {
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ParseFailure("expected true or false")
        }
    }

    static func count(_ text: String, allowZero: Bool = false) throws -> Int {
        guard let value = Int(text), value > 0 || (allowZero && value == 0) else {
            throw ParseFailure(allowZero ? "expected a whole number >= 0" : "expected a whole number > 0")
        }
        return value
    }

    static func duration(_ text: String, unit: Double, positive: Bool = false) throws -> Duration {
        guard let value = Double(text), value >= 0,
            let duration = DurationFlag.duration(seconds: value * unit, in: 0..<1e12)
        else {
            throw ParseFailure("expected a number >= 0")
        }
        guard !positive || value > 0 else { throw ParseFailure("expected a number > 0") }
        return duration
    }
}
