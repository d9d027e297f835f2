public import Hummingbird
public import AuditServerKit
import Logging
import ServiceLifecycle
public import UnixSignals
import Synchronization

/// The metrics listener and the drain: the collector as a fleet service (docs/PROTOCOL.md section 7).
extension CollectorServer {
    /// The exposition of ``metrics`` now, with the listeners' connections and the drain state.
    public func metricsText() -> String {
        var listeners = ["api": connections.stats]
        if operations.metrics != nil { listeners["metrics"] = metricsConnections.stats }
        return metrics.snapshot(connections: listeners, draining: readiness.isDraining).text
    }

    /// The metrics listener's application: `GET /metrics`, `/healthz`, `/readyz`, plain HTTP, no token.
    /// - Parameters:
    ///   - address: where it listens.
    ///   - onRunning: called with the bound port once it accepts connections.
    public func makeMetricsApplication(
        address: CollectorOperations.Address,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        OperationsRoutes(readiness: readiness, metricsText: { self.metricsText() }).register(on: router)
        return Application(
            router: router,
            server: GuardedHTTPServer.http1(table: metricsConnections, logger: logger),
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port),
                backlog: ServerLimits.listenBacklog
            ),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: serverLogger
        )
    }

    /// Serves until SIGTERM or SIGINT, then drains (``drain()``) and returns. With TLS, SIGHUP re-reads the
    /// certificate and key for new connections (a bad file keeps the old ones and logs an error).
    /// - Parameters:
    ///   - onRunning: called with the bound port once the API accepts connections.
    ///   - onMetricsRunning: called with the metrics listener's bound port, when it has one.
    public func runUntilSignalled(
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onMetricsRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        try await runUntilDrained(
            signals: [.sigterm, .sigint],
            onRunning: onRunning,
            onMetricsRunning: onMetricsRunning
        )
    }

    /// Serves the API and the metrics listener (when configured) until a drain ends: one of `signals`, or
    /// ``drain()``, starts it. A second signal during the drain delay skips the rest of it.
    /// - Throws: what a listener throws (one that cannot bind, for one).
    public func runUntilDrained(
        signals: [UnixSignal],
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onMetricsRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        checkFileLimit()
        // First, so that it stops last: the database's pool (when the server runs it) outlives the listeners' drain.
        var services: [any Service] = collector.store.service.map { [$0] } ?? []
        if let address = operations.metrics {
            services.append(makeMetricsApplication(address: address, onRunning: onMetricsRunning))
        }
        // Last, so that it stops first: the metrics listener answers (draining) until the API has drained.
        services.append(makeApplication(onRunning: onRunning))
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        configuration.maximumGracefulShutdownDuration = operations.drainTimeout
        configuration.maximumCancellationDuration = operations.cancellationTimeout
        let group = ServiceGroup(configuration: configuration)
        let received = await UnixSignalsSequence(trapping: signals + (tls == nil ? [] : [.sighup]))
        let (tls, logger) = (tls, logger)
        let (drainRequests, requestDrain) = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                var asked = false
                for await signal in received {
                    if signal == .sighup {
                        tls?.reload(logger: logger)
                    } else if asked {
                        logger.notice("signal during the drain: no longer waiting for load balancers")
                        await drainControl.shutDown()
                    } else {
                        asked = true
                        logger.notice("signal received: draining", metadata: ["signal": "\(signal)"])
                        requestDrain.yield()
                    }
                }
            }
            // Apart from the signal loop, so that a second signal can cut the drain delay short.
            tasks.addTask {
                for await _ in drainRequests {
                    await drain()
                    return
                }
            }
            if drainControl.attach(group) { await group.triggerGracefulShutdown() }
            try await group.run()
            tasks.cancelAll()
        }
        let (open, began) = (connections.stats.open, drainControl.shutDownAt)
        guard let began else { return }
        if ContinuousClock.now - began >= operations.drainTimeout {
            logger.warning(
                "the drain timeout passed: in-flight requests were cancelled (not stored; agents send them again)",
                metadata: [
                    "drainTimeoutSeconds": "\(operations.drainTimeout.secondsText)", "openConnections": "\(open)",
                ]
            )
        } else {
            logger.info("drained: every in-flight request finished", metadata: ["openConnections": "\(open)"])
        }
    }

    /// Drains: `/readyz` answers 503 at once; for ``CollectorOperations/drainDelay`` the listener still accepts
    /// (load balancers see the 503 and take the replica out); then it stops accepting, closes idle connections and
    /// lets in-flight requests finish, within ``CollectorOperations/drainTimeout``. Only the first call drains.
    public func drain() async {
        guard readiness.beginDraining() else { return }
        let stats = connections.stats
        logger.notice(
            "draining: /readyz answers 503",
            metadata: [
                "drainDelaySeconds": "\(operations.drainDelay.secondsText)",
                "drainTimeoutSeconds": "\(operations.drainTimeout.secondsText)",
                "openConnections": "\(stats.open)", "busyConnections": "\(stats.open - stats.awaitingRequest)",
            ]
        )
        if operations.drainDelay > .zero {
            try? await Task.sleep(for: operations.drainDelay)
        }
        await drainControl.shutDown()
    }
}

/// The running service group, and whether its graceful shutdown was asked for (perhaps before it ran).
final class DrainControl: Sendable {
    private struct State {
        var group: ServiceGroup?
        var shutDownAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// When the graceful shutdown was asked for, if it was.
    var shutDownAt: ContinuousClock.Instant? { state.withLock { $0.shutDownAt } }

    /// Registers the running group; answers whether its shutdown was asked for already.
    func attach(_ group: ServiceGroup) -> Bool {
        state.withLock { state in
            state.group = group
            return state.shutDownAt != nil
        }
    }

    /// Stops accepting and lets in-flight requests finish: the group's graceful shutdown, now or once it runs.
    func shutDown() async {
        let group = state.withLock { state in
            if state.shutDownAt == nil { state.shutDownAt = .now }
            return state.group
        }
        await group?.triggerGracefulShutdown()
    }
}
