/// How long a listener waits for each part of a request and how many connections it holds, so that clients who
/// open connections and never finish a request (slowloris) cannot hold the server (docs/threat_model.md).
///
/// Every limit applies to one listener. A connection that has not yet sent a complete request head (a new one, or
/// a keep-alive connection between requests) is *evictable*: when a limit is reached, a new connection replaces the
/// oldest evictable one, so connections that never finish their headers cannot lock new clients out. Only when
/// every held connection is busy with a request is a new one refused. An evicted or refused connection is answered
/// `503 Service Unavailable` with `Retry-After` (it may hold a request the server has not read yet), then closed.
public struct ServerLimits: Sendable, Hashable {
    /// Longest wait for a complete request head on a new connection, counted from the accept. A client sends its
    /// head in one packet; 10 s allows for a slow link and frees a slow connection quickly.
    public var headerTimeout: Duration = .seconds(10)
    /// Longest wait for a request's whole body, counted from the end of its head (not reset by each byte, so a body
    /// sent a byte at a time cannot extend it). 30 s carries the largest batch (`SyncWire.maxRequestBytes`) at
    /// well under 1 MB/s.
    public var bodyTimeout: Duration = .seconds(30)
    /// Longest a keep-alive connection stays open after its last response without a new request head. 75 s, as
    /// nginx: longer than AsyncHTTPClient's 60 s pool idle timeout, so the agent's client closes an idle
    /// connection before the server does and never sends a batch on a connection the server is closing.
    public var idleTimeout: Duration = .seconds(75)
    /// Connections held at most by the listener.
    public var maxConnections = 512
    /// Connections held at most per remote IP address (TCP only; nil for no per-peer limit).
    public var maxConnectionsPerPeer: Int? = 32

    /// The collector's defaults: 512 connections, 32 per peer, 10 s / 30 s / 75 s.
    public init() {}

    /// Limits with the given values; the others keep their defaults.
    public init(
        headerTimeout: Duration = .seconds(10),
        bodyTimeout: Duration = .seconds(30),
        idleTimeout: Duration = .seconds(75),
        maxConnections: Int = 512,
        maxConnectionsPerPeer: Int? = 32
    ) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerPeer = maxConnectionsPerPeer
    }

    /// The agent's ingest listeners (unix socket and TCP, each): 256 connections, 64 per peer. Producers are local
    /// and few; on a loopback TCP listener every producer is the same peer, so the per-peer cap is set higher.
    public static let agentIngest = ServerLimits(maxConnections: 256, maxConnectionsPerPeer: 64)

    /// The agent's metrics listener: 16 connections, 8 per peer (one or two scrapers).
    public static let agentMetrics = ServerLimits(maxConnections: 16, maxConnectionsPerPeer: 8)

    /// The listen backlog of every listener: connections the kernel completes before the server accepts them. The
    /// kernel caps it at `net.core.somaxconn` (4096 on current Linux). Hummingbird's default, 256, overflowed under a
    /// burst of 500 producers connecting at once (a client whose handshake the full queue dropped got no answer for
    /// as long as it waited); the connection limits, not the backlog, are what bounds the server's work.
    public static let listenBacklog = 4096

    /// The `Retry-After` of the 503 that answers a connection the listener cannot hold (evicted or refused), in
    /// seconds: a busy listener frees a connection when any request ends.
    public static let retryAfterSeconds = 1

    /// How long a connection the server answered and is closing (a 503, or a 400 for a malformed or oversize
    /// request head) is still read from, its input discarded, before it is closed: closing a socket with unread
    /// input makes the kernel send a reset, which can reach the client before the answer. The client closes first
    /// once it has read the answer; this bounds what one that does not can hold.
    public static let closeLinger: Duration = .seconds(2)

    /// Answered connections being closed (``closeLinger``) at most at once, beside the held ones: a quarter of
    /// ``maxConnections``. Beyond it an answered connection is closed at once.
    public var maxClosing: Int { max(1, maxConnections / 4) }

    /// The files the listener may hold: its connections and the answered ones being closed.
    public var filesHeld: Int { maxConnections + maxClosing }

    /// Why the limits cannot be used, or nil when they can: every timeout positive, every count at least 1.
    public var problem: String? {
        if headerTimeout <= .zero || bodyTimeout <= .zero || idleTimeout <= .zero {
            return "the header, body and idle timeouts must be positive"
        }
        if maxConnections < 1 { return "the connection limit must be at least 1" }
        if let perPeer = maxConnectionsPerPeer, perPeer < 1 {
            return "the per-peer connection limit must be at least 1"
        }
        return nil
    }
}
