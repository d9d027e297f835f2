public import AuditStore
public import AuditSync
import AuditWire
public import Logging
public import ServiceLifecycle
import AuditChain
import Crypto
import AuditServerKit
import Foundation
import Hummingbird
import Synchronization
public import UnixSignals

/// The audit agent: the ingest API (unix socket, optional loopback TCP), the sync loop and the metrics endpoint,
/// as services of one `ServiceGroup` over the state directory's log.
///
/// Create it with ``init(configuration:logger:)`` (which opens the log, or creates it with new keys and a genesis
/// entry as `auditctl init` does), then ``run(gracefulShutdownSignals:)``. Tests run it in a task on a temporary
/// state directory with TCP port 0, read the bound ports with ``waitUntilListening(timeout:)`` and stop it with
/// ``shutdown()`` (graceful, like SIGTERM) or by cancelling the task.
public final class Agent: Sendable {
    /// The settings.
    public let configuration: AgentConfiguration
    /// The log events are appended to.
    public let log: AuditLog
    /// The sync engine; nil when no backend is configured (delivery off).
    public let engine: SyncEngine?
    /// Whether this agent created the log (the state directory held none).
    public let createdLog: Bool
    /// Where the agent logs (never tokens, keys or payloads).
    public let logger: Logger
    /// The connections each listener holds, under its deadlines and limits.
    public let connections: AgentConnections
    private let endpoints = Mutex(AgentEndpoints())
    private let group = Mutex<(group: ServiceGroup?, stopRequested: Bool)>((nil, false))
    /// How ``run(gracefulShutdownSignals:)`` ended, once it has: `waitUntilListening` reports it instead of waiting.
    private let ended = Mutex<String?>(nil)

    /// Opens (or creates) the log, reads the token and builds the sync engine.
    /// - Parameters:
    ///   - configuration: the settings (validated again here).
    ///   - logger: where the agent and its servers log.
    /// - Throws: ``AgentError``: invalid settings, an unsafe or unreadable token file, a state directory, log or
    ///   key that cannot be opened or created, a catalogue file that does not load, or a socket already in use.
    public init(configuration: AgentConfiguration, logger: Logger) async throws(AgentError) {
        try configuration.validate()
        let token = try configuration.readToken()
        if let socket = configuration.effectiveSocketPath { try SocketFile.checkFree(socket) }
        self.configuration = configuration
        self.logger = logger
        connections = AgentConnections(configuration)
        if let warning = FileLimit.ensure(FileLimit.needed(connections: AgentConnections.total(configuration))) {
            logger.warning("\(warning)")
        }
        (log, createdLog) = try await Self.openOrCreateLog(configuration, logger: logger)
        for address in [configuration.listen, configuration.metrics].compactMap({ $0 }) where !address.isLoopback {
            logger.warning(
                "listening on a non-loopback address: the API has no TLS and no authentication",
                metadata: ["address": "\(address)"]
            )
        }
        if let backend = configuration.backend, backend.scheme?.lowercased() == "http",
            !ListenAddress(host: backend.host ?? "", port: 0).isLoopback
        {
            logger.warning(
                "the backend URL is plain http: entries are encrypted but the token and metadata travel in clear",
                metadata: ["backend": "\(Self.redacted(backend))"]
            )
        }
        guard let backend = configuration.backend else {
            engine = nil
            logger.warning(
                "delivery is off: no backend configured; events are kept in the local encrypted log only",
                metadata: ["stateDir": "\(configuration.stateDirectory)"]
            )
            return
        }
        let transport = HTTPSyncTransport(
            backend: backend,
            token: token,
            timeout: configuration.requestTimeout,
            tls: try configuration.makeTLS()
        )
        let collectorKey = try configuration.collectorKeyFile.map { path throws(AgentError) in
            try Self.readCollectorKey(path)
        }
        do {
            engine = try SyncEngine(
                log: log,
                transport: transport,
                policy: configuration.policy,
                collectorKey: collectorKey,
                witnessKeys: configuration.witnessKeys,
                witnessQuorum: configuration.witnessQuorum
            ) { event in
                logger.log(
                    level: Logger.Level(rawValue: event.level) ?? .info,
                    "\(event.message)",
                    metadata: event.fields.mapValues { .string($0) }
                )
            }
        } catch {
            throw AgentError(.stateDirectory, "cannot start delivery: \(error)")
        }
        logger.info(
            "delivery is on",
            metadata: [
                "backend": "\(Self.redacted(backend))", "token": "\(token == nil ? "none" : "set")",
                "maxEvents": "\(configuration.policy.maxEvents)", "batchSize": "\(configuration.policy.batchSize)",
            ]
        )
    }

    /// The collector's receipt key from the file an operator pinned it in.
    static func readCollectorKey(_ path: String) throws(AgentError) -> Curve25519.Signing.PublicKey {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 64 * 1024 else {
            throw AgentError(.invalidConfiguration, "cannot read the collector key file \(path)")
        }
        do {
            return try CollectorPublicKey.parse(Array(data))
        } catch {
            throw AgentError(.invalidConfiguration, "collector key file \(path): \(error)")
        }
    }

    /// The agent's services, in start order: sync loop, metrics, unix socket, TCP. A graceful shutdown stops them
    /// in reverse: the listeners stop accepting and finish in-flight requests (and their commits) first, then the
    /// sync loop stops.
    public func makeServices() -> [any Service] {
        // First to start and last to stop: the close record is sealed after the listeners finished their commits.
        var services: [any Service] = [EpochService(log: log, logger: logger)]
        let policy = configuration.policy
        if let engine {
            services.append(SyncService(engine: engine, interval: configuration.syncInterval))
        }
        if let metrics = configuration.metrics {
            let responder = MetricsResponder(log: log, engine: engine, policy: policy, logger: logger)
            services.append(
                Listener(
                    name: "metrics",
                    responder: responder,
                    address: .hostname(metrics.host, port: metrics.port),
                    connections: connections.metrics,
                    logger: logger
                ) {
                    port in self.endpoints.withLock { $0.metricsPort = port }
                }
            )
        }
        let ingest = IngestResponder(
            log: log,
            engine: engine,
            policy: policy,
            maxBodyBytes: configuration.maxBodyBytes,
            logger: logger
        )
        if let socket = configuration.effectiveSocketPath {
            services.append(
                Listener(
                    name: "ingest-unix",
                    // The socket alone offers erasure (docs/FORMAT.md 13.9): the peer's uid is known there.
                    responder: SocketResponder(ingest: ingest),
                    address: .unixDomainSocket(path: socket),
                    connections: connections.unix,
                    logger: logger
                ) { _ in
                    self.endpoints.withLock { $0.socketPath = socket }
                }.socket(path: socket, mode: configuration.socketMode)
            )
        }
        if let listen = configuration.listen {
            services.append(
                Listener(
                    name: "ingest-tcp",
                    responder: ingest,
                    address: .hostname(listen.host, port: listen.port),
                    connections: connections.tcp,
                    logger: logger
                ) {
                    port in self.endpoints.withLock { $0.tcpPort = port }
                }
            )
        }
        return services
    }

    /// Runs every service until the task is cancelled or one of `gracefulShutdownSignals` arrives; a graceful
    /// shutdown is bounded by ``AgentConfiguration/shutdownTimeout``, after which the remaining work is cancelled.
    /// - Throws: what a service throws (a listener that cannot bind, for one).
    public func run(gracefulShutdownSignals: [UnixSignal] = []) async throws {
        var group = ServiceGroupConfiguration(
            services: makeServices(),
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger
        )
        group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        group.maximumCancellationDuration = configuration.cancellationTimeout
        let serviceGroup = ServiceGroup(configuration: group)
        let stopRequested = self.group.withLock { state in
            state.group = serviceGroup
            return state.stopRequested
        }
        if stopRequested { await serviceGroup.triggerGracefulShutdown() }
        do {
            try await serviceGroup.run()
            ended.withLock { $0 = "it stopped" }
        } catch {
            ended.withLock { $0 = "it failed: \(error)" }
            throw error
        }
    }

    /// Starts a graceful shutdown, as SIGTERM does: the listeners stop accepting and finish in-flight requests,
    /// then the sync loop stops; ``run(gracefulShutdownSignals:)`` returns when they are done.
    ///
    /// Prefer this to cancelling the running task: cancelling a NIO server while a connection is being accepted
    /// can trap (apple/swift-nio#3481).
    public func shutdown() async {
        let running = group.withLock { state in
            state.stopRequested = true
            return state.group
        }
        await running?.triggerGracefulShutdown()
    }

    /// Runs until SIGTERM or SIGINT (the daemon).
    public func runUntilSignalled() async throws {
        try await run(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// What is listening so far.
    public var listening: AgentEndpoints { endpoints.withLock { $0 } }

    /// Waits until every configured listener is bound (polling; tests and readiness checks).
    /// - Throws: ``AgentError`` (``AgentError/Code/cannotListen``) if they are not bound within `timeout`, or if
    ///   ``run(gracefulShutdownSignals:)`` has ended before they were (with how it ended).
    public func waitUntilListening(timeout: Duration = .seconds(30)) async throws -> AgentEndpoints {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = listening
            if (configuration.effectiveSocketPath == nil || current.socketPath != nil)
                && (configuration.listen == nil || current.tcpPort != nil)
                && (configuration.metrics == nil || current.metricsPort != nil)
            {
                return current
            }
            if let ended = ended.withLock({ $0 }) {
                throw AgentError(
                    .cannotListen,
                    "the agent's services ended before its listeners were bound (\(ended)); bound: \(current)"
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw AgentError(.cannotListen, "the listeners were not bound within \(timeout); bound: \(listening)")
    }

    /// The backend URL without user info, query or fragment (safe to log).
    static func redacted(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.user = nil
        components?.password = nil
        components?.query = nil
        components?.fragment = nil
        return components?.string ?? "(unprintable URL)"
    }
}

/// What the agent's listeners are bound to.
public struct AgentEndpoints: Sendable, Hashable {
    /// The unix socket, once bound.
    public var socketPath: String?
    /// The TCP ingest port, once bound.
    public var tcpPort: Int?
    /// The metrics port, once bound.
    public var metricsPort: Int?

    /// Nothing bound.
    public init() {}
}
