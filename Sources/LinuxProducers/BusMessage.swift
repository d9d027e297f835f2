public import AuditChain

/// One D-Bus message as `busctl monitor --json=short` prints it: the header fields the fprintd watcher reads and the
/// body's arguments (busctl's `payload.data`).
public struct BusMessage: Sendable, Hashable {
    /// The four D-Bus message types.
    public enum Kind: String, Sendable, Hashable {
        case methodCall = "method_call"
        case methodReturn = "method_return"
        case error
        case signal
    }

    /// The message type.
    public var kind: Kind
    /// The sender's serial (busctl's `cookie`).
    public var cookie: UInt64
    /// The serial of the call this answers (`reply_cookie`), for replies and errors.
    public var replyCookie: UInt64?
    /// When the bus saw it, in microseconds since the epoch (`timestamp-realtime`), when busctl gives it.
    public var timestampMicros: Int64?
    /// The sender's unique name (`:1.42`), or the bus itself (`org.freedesktop.DBus`).
    public var sender: String?
    /// The destination, when addressed (calls, replies, unicast signals).
    public var destination: String?
    /// The object path.
    public var path: String?
    /// The interface.
    public var interface: String?
    /// The member (method or signal name).
    public var member: String?
    /// The error name, for errors.
    public var errorName: String?
    /// The body's arguments, in order; a variant stays busctl's `{"type", "data"}` object.
    public var arguments: [JSONValue]

    /// Creates a message.
    public init(
        kind: Kind,
        cookie: UInt64,
        replyCookie: UInt64? = nil,
        timestampMicros: Int64? = nil,
        sender: String? = nil,
        destination: String? = nil,
        path: String? = nil,
        interface: String? = nil,
        member: String? = nil,
        errorName: String? = nil,
        arguments: [JSONValue] = []
    ) {
        self.kind = kind
        self.cookie = cookie
        self.replyCookie = replyCookie
        self.timestampMicros = timestampMicros
        self.sender = sender
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.arguments = arguments
    }

    /// The `index`-th argument as a string, if it is one.
    public func string(at index: Int) -> String? {
        arguments.indices.contains(index) ? arguments[index].stringValue : nil
    }

    /// The `index`-th argument as a boolean, if it is one.
    public func bool(at index: Int) -> Bool? {
        guard arguments.indices.contains(index), case .bool(let value) = arguments[index] else { return nil }
        return value
    }

    /// The `index`-th argument as an integer, if it is one.
    public func integer(at index: Int) -> Int64? {
        arguments.indices.contains(index) ? arguments[index].integerValue : nil
    }
}
