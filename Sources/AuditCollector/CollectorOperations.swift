public import AuditServerKit

/// How the collector runs as a fleet service: its metrics listener, its readiness check and its drain on SIGTERM
/// (docs/PROTOCOL.md section 7).
public struct CollectorOperations: Sendable, Hashable {
    /// A TCP address to listen on.
    public typealias Address = ListenAddress

    /// The metrics listener (`GET /metrics`, `/healthz`, `/readyz`, plain HTTP, no token); nil for none. A
    /// non-loopback address needs ``CollectorConfiguration/allowPlainHTTP``.
    public var metrics: Address?
    /// The metrics listener's connection limits: 16 connections, 8 per peer (a few scrapers and probes).
    public var metricsLimits = ServerLimits.agentMetrics
    /// After SIGTERM, how long in-flight requests may take to finish once the listener stops accepting; past it
    /// they are cancelled (nothing acknowledged is lost: a batch commits whole or not at all).
    public var drainTimeout: Duration = .seconds(10)
    /// After SIGTERM, how long the collector keeps accepting while `/readyz` answers 503, so that load balancers
    /// take it out of rotation before it stops accepting (0: stop accepting at once).
    public var drainDelay: Duration = .zero
    /// How long `/readyz` waits for the database's answer before it answers 503.
    public var readinessTimeout: Duration = .seconds(2)
    /// Bound on the cancellation that follows a drain past ``drainTimeout``: past it swift-service-lifecycle ends the
    /// process, so that work ignoring cancellation cannot keep the daemon alive; nil waits (embedding, tests).
    public var cancellationTimeout: Duration? = .seconds(5)
    /// Per-log series are kept for the logs this replica received a batch of within this window.
    public var logSeriesWindow: Duration = .seconds(600)
    /// At most this many logs have per-log series; past it the least recently seen log's series are dropped.
    public var maxLogSeries = 100

    /// The defaults: no metrics listener, drain 10 s with no delay, readiness deadline 2 s, 100 logs over 10 min.
    public init() {}

    /// Why these settings cannot be used, or nil.
    /// - Parameter allowPlainHTTP: whether plain HTTP may listen off loopback.
    public func problem(allowPlainHTTP: Bool) -> String? {
        let hour = Duration.seconds(3600)
        if drainTimeout <= .zero || drainTimeout > hour { return "the drain timeout must be between 0 and 3600 s" }
        if drainDelay < .zero || drainDelay > hour { return "the drain delay must be between 0 and 3600 s" }
        if readinessTimeout <= .zero || readinessTimeout > .seconds(60) {
            return "the readiness timeout must be between 0 and 60 s"
        }
        if let cancellationTimeout, cancellationTimeout <= .zero { return "the cancellation timeout must be positive" }
        if logSeriesWindow <= .zero || maxLogSeries < 0 {
            return "the per-log series window must be positive and their number at least 0"
        }
        if let problem = metricsLimits.problem { return "metrics listener: " + problem }
        if let metrics, !allowPlainHTTP, !CollectorConfiguration.isLoopback(metrics.host) {
            return "--metrics \(metrics) is not a loopback address and the metrics listener is plain HTTP with no "
                + "token: pass --allow-plain-http if a firewall keeps it to the scrapers"
        }
        return nil
    }
}

extension Duration {
    /// Seconds as a log or a reason shows them: `2`, `0.25`.
    var secondsText: String { CollectorMetrics.Snapshot.number(CollectorMetrics.seconds(self)) }
}

extension ListenAddress {
    /// Parses `HOST:PORT` (`[::1]:PORT` for IPv6) given with the collector's flag `flag`.
    /// - Throws: ``CollectorError`` (``CollectorError/Code/invalidConfiguration``) naming `flag`.
    public init(parsing text: String, flag: String) throws(CollectorError) {
        do {
            try self.init(parsing: text)
        } catch {
            throw CollectorError(.invalidConfiguration, error.message(flag, text: text))
        }
    }
}
