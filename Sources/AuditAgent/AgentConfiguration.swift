import AuditSupport
public import AuditStore
public import AuditHTTPClient
import AuditSync
public import AuditServerKit
public import Foundation
public import Logging
public import TransparencyLog

/// The agent's settings. Every member has a default; ``resolve(configFile:environment:flags:)`` reads a JSON file,
/// the environment and flags over them (flags override the environment, which overrides the file).
///
/// The keys of the file, the environment variables and the flags are listed in ``settings`` and in
/// docs/OPERATIONS.md section 1.1.
public struct AgentConfiguration: Sendable {
    /// How log lines are written to standard error (the handler's format, shared with the collector).
    public typealias LogFormat = StructuredLogHandler.Format

    /// The state directory (log, keys, default socket).
    public var stateDirectory = StateDirectory.defaultPath
    /// The device id written into a new log's genesis; nil for the host name.
    public var deviceId: String?
    /// A catalogue file adding event types (docs/CATALOGUE.md); nil for the built-in catalogue.
    public var catalogueFile: String?
    /// The backend's base URL; nil turns delivery off (events are only kept in the local encrypted log).
    public var backend: URL?
    /// The backend's bearer token, given directly (prefer ``tokenFile``).
    public var token: String?
    /// A file holding the bearer token (mode 0600 or stricter; systemd credentials qualify).
    public var tokenFile: String?
    /// A file holding the collector's receipt key (the answer of `GET /v1/collector/key`, or 64 hex digits); nil
    /// pins the key the collector publishes at first contact.
    public var collectorKeyFile: String?
    /// A CA bundle (PEM) an `https://` backend's certificate must chain to, instead of the system's roots.
    public var caFile: String?
    /// Pins of the collector's key (RFC 7469 `pin-sha256`: base64 of the SHA-256 of its certificate's DER
    /// SubjectPublicKeyInfo): an `https://` backend's certificate must be trusted as ``caFile`` says *and* have the
    /// key of one of them. Empty for no pinning.
    public var pins: Set<CertificatePin> = []
    /// The client certificate chain (PEM) presented to an `https://` backend that asks for one (mTLS).
    public var tlsClientCertificateFile: String?
    /// The client certificate's private key (PEM; refused if group or others can read it).
    public var tlsClientKeyFile: String?
    /// Allows an `http://` backend that is not on loopback (the token and entries' metadata then travel in clear).
    public var allowPlainHTTP = false
    /// Witnesses whose cosignatures each collector checkpoint must carry (docs/WITNESS.md); empty
    /// for none.
    public var witnessKeys: [CosignatureVerifierKey] = []
    /// How many of ``witnessKeys`` must have cosigned a checkpoint; nil for all of them.
    public var witnessQuorum: Int?
    /// Whether the unix ingest socket is on.
    public var socketEnabled = true
    /// The unix ingest socket; nil for `<stateDirectory>/ingest.sock`.
    public var socketPath: String?
    /// Mode of the unix ingest socket, set after it is bound.
    public var socketMode: UInt16 = 0o660
    /// An optional TCP ingest listener (loopback unless ``allowRemoteListen``).
    public var listen: ListenAddress?
    /// An optional TCP listener serving `GET /metrics` (Prometheus text format); off by default.
    public var metrics: ListenAddress?
    /// Allows non-loopback TCP listeners (there is no TLS and no authentication on the ingest API).
    public var allowRemoteListen = false
    /// Largest accepted request body; larger bodies get 413.
    public var maxBodyBytes = 1 << 20
    /// Request deadlines and connection limits of each ingest listener (the unix socket and TCP each; the per-peer
    /// limit applies to TCP only).
    public var limits = ServerLimits.agentIngest
    /// Request deadlines and connection limits of the metrics listener.
    public var metricsLimits = ServerLimits.agentMetrics
    /// The delivery limits.
    public var policy = DeliveryPolicy()
    /// Deadline of one request to the backend.
    public var requestTimeout: Duration = .seconds(30)
    /// Longest the sync loop sleeps when there is nothing to do (appends wake it at once).
    public var syncInterval: Duration = .seconds(2)
    /// Format version 2: the length of an epoch in seconds, for a new log and for the epochs that begin from now on
    /// (docs/FORMAT.md, section 13.3).
    public var epochSeconds: UInt64 = 600
    /// The format version of a log the agent creates (docs/FORMAT.md): 1, or 2 (epochs, forward-secure keys, one
    /// signature per commit). An existing log keeps its version (`auditctl keys upgrade` moves one to 2).
    public var formatVersion: UInt8 = 2
    /// Whether a version 2 log the agent creates seals each event with a user id under its subject's content key,
    /// so that `auditctl erase` can erase one subject (docs/FORMAT.md, section 13.9), as `auditctl init
    /// --subject-keys` does. An existing log keeps its choice; a version 1 log has no subject keys.
    public var subjectKeys = false
    /// Bound on graceful shutdown (stop accepting, finish in-flight commits, stop the sync loop); past it the
    /// remaining work is cancelled.
    public var shutdownTimeout: Duration = .seconds(10)
    /// Bound on the cancellation that follows a shutdown past ``shutdownTimeout``: past it, swift-service-lifecycle
    /// ends the process with a fatal error, so that a service that ignores cancellation cannot keep the daemon from
    /// exiting. Every acknowledged event is committed already, so that loses none. `nil` waits however long it takes
    /// (for an agent embedded in another process, which must not be ended by it).
    public var cancellationTimeout: Duration? = .seconds(30)
    /// The log level.
    public var logLevel: Logger.Level = .info
    /// The log line format.
    public var logFormat: LogFormat = .logfmt

    /// The defaults.
    public init() {}

    /// The state directory as a value.
    public var state: StateDirectory { StateDirectory(path: stateDirectory) }

    /// The unix socket path in effect, nil when the socket is off.
    public var effectiveSocketPath: String? {
        guard socketEnabled else { return nil }
        return socketPath ?? stateDirectory + "/ingest.sock"
    }

    /// Checks the combination of settings.
    /// - Throws: ``AgentError`` for a non-loopback listener without ``allowRemoteListen``, no listener at all,
    ///   both a token and a token file, a backend that is not http(s), or a socket path too long.
    public func validate() throws(AgentError) {
        if let witnessQuorum, witnessQuorum > Set(witnessKeys).count {
            throw AgentError(
                .invalidConfiguration,
                "witnessQuorum \(witnessQuorum) is more than the \(Set(witnessKeys).count) witness keys configured "
                    + "(witnessKey): no checkpoint could ever satisfy it"
            )
        }
        for (name, address) in [("listen", listen), ("metrics", metrics)] {
            guard let address, !address.isLoopback, !allowRemoteListen else { continue }
            throw AgentError(
                .invalidConfiguration,
                "\(name) \(address) is not a loopback address; the ingest API has no TLS and no authentication. "
                    + "Use 127.0.0.1 or ::1, or pass --allow-remote-listen if a firewall protects it"
            )
        }
        guard effectiveSocketPath != nil || listen != nil else {
            throw AgentError(.invalidConfiguration, "no ingest listener: enable the unix socket or give --listen")
        }
        if let path = effectiveSocketPath, path.utf8.count > 100 {
            throw AgentError(.invalidConfiguration, "socket path \(path) is too long for a unix socket (max 100 bytes)")
        }
        if token != nil, tokenFile != nil {
            throw AgentError(.invalidConfiguration, "give either a token or a token file, not both")
        }
        if let backend {
            guard let scheme = backend.scheme?.lowercased(), scheme == "http" || scheme == "https",
                backend.host?.isEmpty == false
            else {
                throw AgentError(.invalidConfiguration, "backend must be an http(s) URL, got \"\(backend)\"")
            }
            if scheme == "http", !allowPlainHTTP, !Self.isLoopbackHost(backend.host ?? "") {
                throw AgentError(
                    .invalidConfiguration,
                    "backend \(backend.host ?? "") is plain http and not on loopback: the token and the entries' "
                        + "metadata would travel in clear. Use an https:// backend, or pass --allow-plain-http "
                        + "(allowPlainHttp, AUDITD_ALLOW_PLAIN_HTTP) if something else protects the link"
                )
            }
        }
        if !pins.isEmpty, let backend, backend.scheme?.lowercased() != "https" {
            throw AgentError(
                .invalidConfiguration,
                "pinSha256 pins the key of an https:// backend's certificate; backend \(backend.host ?? "") is plain "
                    + "http, where nothing would check it"
            )
        }
        if (tlsClientCertificateFile == nil) != (tlsClientKeyFile == nil) {
            throw AgentError(.invalidConfiguration, "tlsClientCert and tlsClientKey go together: give both or neither")
        }
        guard maxBodyBytes > 0, policy.batchSize > 0, policy.maxEvents > 0 else {
            throw AgentError(.invalidConfiguration, "maxBodyBytes, batchSize and maxEvents must be positive")
        }
        if let problem = limits.problem ?? metricsLimits.problem { throw AgentError(.invalidConfiguration, problem) }
    }

    /// Whether a URL's host is 127.0.0.0/8, ::1 or localhost.
    static func isLoopbackHost(_ host: String) -> Bool {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return ListenAddress(host: host, port: 0).isLoopback
    }

    /// Reads the TLS files (the CA bundle and the client certificate and key) and adds the pins.
    /// - Throws: ``AgentError`` for an unreadable, unsafe or invalid file.
    public func makeTLS() throws(AgentError) -> SyncTLS {
        do {
            return try SyncTLS(
                caFile: caFile,
                clientCertificateFile: tlsClientCertificateFile,
                clientKeyFile: tlsClientKeyFile,
                pins: pins
            )
        } catch {
            throw AgentError(.invalidConfiguration, error.description)
        }
    }

    /// Reads the bearer token: ``token``, else ``tokenFile`` (refused if group or others can read it), else nil.
    /// - Throws: ``AgentError`` (``AgentError/Code/unsafeTokenFile``) for an unsafe, unreadable or empty file.
    public func readToken() throws(AgentError) -> String? {
        if let token { return token }
        guard let tokenFile else { return nil }
        do {
            return try TokenFile.read(tokenFile)
        } catch {
            throw AgentError(.unsafeTokenFile, error.description)
        }
    }
}
