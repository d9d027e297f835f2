public import AuditServerKit
public import Hummingbird
public import Logging
import NIOCore
import UnixSignals

/// The collector's HTTP server (Hummingbird): `POST /v1/audit/events`, `GET /v1/collector/key`, and per log
/// `GET /v1/logs/{logId}/head`, `checkpoint`, `tile/…` and `proof…` (the read API) over a ``Collector``.
///
/// Run it with ``run(onRunning:)`` inside a task and cancel the task to stop it (tests, embedding), or with
/// ``runUntilSignalled(onRunning:)`` for a daemon that stops gracefully on SIGTERM and SIGINT.
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

    /// Creates a server.
    /// - Parameters:
    ///   - token: the ingest token; nil for none.
    ///   - readAccess: who may use the read API (by default, whoever holds the ingest token).
    ///   - limits: request deadlines and connection limits (docs/threat_model.md).
    public init(
        collector: Collector,
        host: String,
        port: Int,
        token: String?,
        readAccess: ReadAccess = .ingestToken,
        limits: ServerLimits = ServerLimits(),
        tls: ServerTLS? = nil,
        logger: Logger
    ) {
        self.tls = tls
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
            logger: logger
        )
    }

    /// The Hummingbird application serving the routes.
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    public func makeApplication(
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        CollectorRoutes(collector: collector, token: token, readAccess: readAccess, logger: logger).register(on: router)
        return Application(
            router: router,
            server: tls.map { GuardedHTTPServer.https(table: connections, logger: logger, tls: $0) }
                ?? GuardedHTTPServer.http1(table: connections, logger: logger),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// Serves until the calling task is cancelled.
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        checkFileLimit()
        try await makeApplication(onRunning: onRunning).run()
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully. With TLS, SIGHUP re-reads the certificate and
    /// key for new connections (a bad file keeps the old ones and logs an error).
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    public func runUntilSignalled(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        checkFileLimit()
        guard let tls else {
            try await makeApplication(onRunning: onRunning).runService()
            return
        }
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let logger = logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in hangups { tls.reload(logger: logger) }
            }
            try await makeApplication(onRunning: onRunning).runService()
            group.cancelAll()
        }
    }

    /// Raises the open-file limit to fit the connection limit, or warns that it cannot.
    private func checkFileLimit() {
        if let warning = FileLimit.ensure(FileLimit.needed(connections: [connections.limits.maxConnections])) {
            logger.warning("\(warning)", metadata: ["maxConnections": "\(connections.limits.maxConnections)"])
        }
    }
}
