import Foundation

/// The settings of `auditd fprintd`; every member but the socket has a default.
public struct FprintdWatcherConfiguration: Sendable {
    /// The agent's ingest socket.
    public var socketPath: String
    /// The bus to watch (`unix:path=...`); nil watches the system bus.
    public var busAddress: String?
    /// The `busctl` program (systemd's; no systemd needs to run).
    public var busctlPath = "/usr/bin/busctl"
    /// Put before a reader's object path (less `/net/reactivated/Fprint/`) to make the event's device id:
    /// `<host>/fprintd/Device/0` by default.
    public var deviceIdPrefix = HostName.current + "/fprintd/"
    /// The client's buffer file (events the agent did not take yet survive a restart); nil keeps them in memory.
    public var bufferFile: String?
    /// A JSON file rewritten on every change of health (bus, fprintd, counts); nil writes none.
    public var statusFile: String?
    /// The waits before starting `busctl monitor` again after it ended (the bus went away), the last repeating.
    public var reconnectDelays: [Duration] = [.milliseconds(200), .seconds(1), .seconds(5)]
    /// Most bus lines waiting to be read before new ones are dropped (and counted in the health).
    public var maxQueuedLines = 65536

    /// The defaults, for the agent at `socketPath`.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// `busctl`'s arguments choosing the bus.
    var busArguments: [String] {
        if let busAddress { return ["--address=\(busAddress)"] }
        return ["--system"]
    }
}
