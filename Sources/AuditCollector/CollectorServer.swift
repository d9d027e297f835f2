public import AuditServerKit
public import Hummingbird
public import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The collector's HTTP server (Hummingbird): `POST /v1/audit/events`, `GET /v1/collector/key`, and per log
/// `GET /v1/logs/{logId}/head`, `checkpoint`, `tile/…` and `proof…` (the read API) over a ``Collector``, with
/// `GET /healthz` and `GET /readyz` for load balancers; optionally a metrics listener (`GET /metrics`).
///
/// Run it with ``run(onRunning:)`` inside a task and cancel the task to stop it (tests, embedding), or with
/// ``runUntilSignalled(onRunning:onMetricsRunning:)`` for a daemon that drains on SIGTERM and SIGINT (``drain()``).
public struct CollectorServer: Sendable {
    /// The logic behind the routes.
    public let collector: Collector
    /// Address to bind.
    public let host: String
    /// Port to bind (0: any free port; the bound port is passed to `onRunning`).
    public let port: Int
    /// Bearer token every request must carry; nil for none.
    let token: String?
    /// Who may use the read API.
    let readAccess: ReadAccess
    /// Where request failures are logged (never tokens, keys or entry contents).
    public let logger: Logger
    /// The connections the listener holds, under its request deadlines and connection limits.
    public let connections: ConnectionTable
    /// TLS credentials; nil serves plain HTTP.
    public let tls: ServerTLS?
    /// The metrics listener, readiness and drain settings.
    public let operations: CollectorOperations
    /// What this process did since it started (`GET /metrics`).
    public let metrics: CollectorMetrics
    /// Whether the collector takes traffic (`GET /readyz`), and whether it drains.
    public let readiness: CollectorReadiness
    /// The connections the metrics listener holds (unused without one).
    public let metricsConnections: ConnectionTable
    /// The running services, for ``drain()``.
    let drainControl = DrainControl()

    /// Creates a server.
    /// - Parameters:
    ///   - token: the ingest token; nil for none.
    ///   - readAccess: who may use the read API (by default, whoever holds the ingest token).
    ///   - limits: request deadlines and connection limits (docs/threat_model.md).
    ///   - operations: the metrics listener, readiness and drain settings.
    ///   - readinessCheck: the database check of `/readyz` (default: `collector.store.ping()`).
    public init(
        collector: Collector,
        host: String,
        port: Int,
        token: String?,
        readAccess: ReadAccess = .ingestToken,
        limits: ServerLimits = ServerLimits(),
        tls: ServerTLS? = nil,
        operations: CollectorOperations = CollectorOperations(),
        readinessCheck: CollectorReadiness.Check? = nil,
        logger: Logger
    ) {
        self.tls = tls
        self.operations = operations
        metrics = CollectorMetrics(logSeriesWindow: operations.logSeriesWindow, maxLogSeries: operations.maxLogSeries)
        readiness = CollectorReadiness(
            deadline: operations.readinessTimeout,
            logger: logger,
            check: readinessCheck ?? { [store = collector.store] in try await store.ping() }
        )
        metricsConnections = ConnectionTable(limits: operations.metricsLimits)
        self.collector = collector
        self.host = host
        self.port = port
        self.token = token
        self.readAccess = readAccess
        self.logger = logger
        connections = ConnectionTable(limits: limits)
    }

    /// Creates a server from a configuration: reads the token, opens the database and the receipt key, reads
    /// trust files.
    /// - Throws: ``CollectorError`` as ``CollectorConfiguration/validate()``, ``CollectorConfiguration/readToken()``
    ///   and ``CollectorConfiguration/makeCollector(logger:clock:)``.
    public init(
        configuration: CollectorConfiguration,
        logger: Logger = Logger(label: "auditd.collector")
    ) async throws(CollectorError) {
        try configuration.validate()
        let token = try configuration.readToken()
        let readAccess = try configuration.readAccess()
        let tls = try configuration.makeTLS()
        self.init(
            collector: try await configuration.makeCollector(logger: logger),
            host: configuration.host,
            port: configuration.port,
            token: token,
            readAccess: readAccess,
            limits: configuration.limits,
            tls: tls,
            operations: configuration.operations,
            logger: logger
        )
    }

    /// The Hummingbird application serving the routes.
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    public func makeApplication(
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        CollectorRoutes(
            collector: collector,
            token: token,
            readAccess: readAccess,
            logger: logger,
            metrics: metrics,
            ui: CollectorUIState(secureCookies: tls != nil)
        )
        .register(on: router)
        OperationsRoutes(readiness: readiness, metricsText: nil).register(on: router)
        return Application(
            router: router,
            server: tls.map { GuardedHTTPServer.https(table: connections, logger: logger, tls: $0) }
                ?? GuardedHTTPServer.http1(table: connections, logger: logger),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                backlog: ServerLimits.listenBacklog
            ),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: serverLogger
        )
    }

    /// The logger given to Hummingbird: at the default level (info) its own "Server started and listening on" lines
    /// are left out, so that the collector's "listening on HOST:PORT" names the API listener alone.
    var serverLogger: Logger {
        var quieter = logger
        if quieter.logLevel == .info { quieter.logLevel = .notice }
        return quieter
    }

    /// Serves until the calling task is cancelled (with the database's pool, when the server runs it).
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        checkFileLimit()
        let application = makeApplication(onRunning: onRunning)
        guard let pool = collector.store.service else { return try await application.run() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pool.run() }
            group.addTask { try await application.run() }
            // Either ending ends both.
            try await group.next()
            group.cancelAll()
        }
    }

    /// Raises the open-file limit to fit the connection limit, or warns that it cannot.
    func checkFileLimit() {
        var listeners = [connections.limits.filesHeld]
        if operations.metrics != nil { listeners.append(metricsConnections.limits.filesHeld) }
        if let warning = FileLimit.ensure(FileLimit.needed(connections: listeners)) {
            logger.warning("\(warning)", metadata: ["maxConnections": "\(connections.limits.maxConnections)"])
        }
    }
}
