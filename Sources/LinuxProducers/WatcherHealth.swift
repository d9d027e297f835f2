public import AuditChain

/// What `auditd fprintd` says about itself: on standard error at every change, and in its status file.
public struct WatcherHealth: Sendable, Hashable {
    /// The watcher's link to the bus.
    public enum Bus: String, Sendable {
        /// `busctl monitor` is starting; no message seen yet.
        case connecting
        /// Messages arrive.
        case watching
        /// `busctl monitor` ended (the bus went away, or busctl failed); reconnecting after a wait.
        case lost
    }

    /// The link to the bus.
    public var bus: Bus = .connecting
    /// fprintd's unique name while it runs; nil when it does not (or is not known yet).
    public var fprintdOwner: String?
    /// Times `busctl monitor` was started again after it ended.
    public var busReconnects = 0
    /// Times fprintd took its name while watched (a start or restart).
    public var fprintdStarts = 0
    /// Operations observed and handed to the client.
    public var observed = 0
    /// Bus lines dropped unread because the watcher fell behind.
    public var linesDropped = 0
    /// The last problem, if any.
    public var lastError: String?

    /// A watcher that has seen nothing.
    public init() {}

    /// The health as a JSON object (the status file), with the client's count of events waiting for the agent.
    public func json(buffered: Int) -> JSONValue {
        var object: [String: JSONValue] = [
            "bus": .string(bus.rawValue),
            "fprintd": .string(fprintdOwner == nil ? "not running" : "running"),
            "busReconnects": .integer(Int64(busReconnects)),
            "fprintdStarts": .integer(Int64(fprintdStarts)),
            "observed": .integer(Int64(observed)),
            "linesDropped": .integer(Int64(linesDropped)),
            "buffered": .integer(Int64(buffered)),
        ]
        if let fprintdOwner { object["fprintdOwner"] = .string(fprintdOwner) }
        if let lastError { object["lastError"] = .string(lastError) }
        return .object(object)
    }
}
