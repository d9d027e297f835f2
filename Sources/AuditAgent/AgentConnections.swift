public import AuditServerKit

/// The connections each of the agent's listeners holds, under its request deadlines and connection limits
/// (docs/threat_model.md). Every listener has its own table: a flood of TCP connections can never take the files
/// the unix socket needs.
public struct AgentConnections: Sendable {
    /// The unix ingest socket's.
    public let unix: ConnectionTable
    /// The TCP ingest listener's.
    public let tcp: ConnectionTable
    /// The metrics listener's.
    public let metrics: ConnectionTable

    /// Tables for the limits of `configuration`. The unix socket has no per-peer limit (its peers have no address;
    /// the socket's mode decides who may connect).
    init(_ configuration: AgentConfiguration) {
        var unixLimits = configuration.limits
        unixLimits.maxConnectionsPerPeer = nil
        unix = ConnectionTable(limits: unixLimits)
        tcp = ConnectionTable(limits: configuration.limits)
        metrics = ConnectionTable(limits: configuration.metricsLimits)
    }

    /// The connections the configured listeners may hold together, for the open-file limit.
    static func total(_ configuration: AgentConfiguration) -> [Int] {
        var counts: [Int] = []
        if configuration.effectiveSocketPath != nil { counts.append(configuration.limits.filesHeld) }
        if configuration.listen != nil { counts.append(configuration.limits.filesHeld) }
        if configuration.metrics != nil { counts.append(configuration.metricsLimits.filesHeld) }
        return counts
    }
}
