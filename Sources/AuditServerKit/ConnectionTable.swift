public import NIOCore
import Synchronization

/// The connections one listener holds, shared by the ``ConnectionGuard`` of each of them: admits or refuses a new
/// connection under the listener's ``ServerLimits`` and tells the connections it evicts (see ``ConnectionBook``),
/// whose guards answer them 503 and close them.
public final class ConnectionTable: Sendable {
    /// What the listener did with connections since it started.
    public struct Stats: Sendable, Hashable {
        /// Connections held now.
        public var open = 0
        /// Of those, connections waiting for a request head (new or idle keep-alive): the evictable ones.
        public var awaitingRequest = 0
        /// Connections admitted.
        public var admitted = 0
        /// Connections answered 503 at once and closed because every held connection was busy (listener or peer
        /// limit).
        public var refused = 0
        /// Connections answered 503 and closed to make room for a new one, before they had sent a complete request
        /// head (or before the server had read it).
        public var evicted = 0
        /// Connections answered (a 503, or a 400 that ends the connection) and being closed now: their input is read
        /// and discarded for at most ``ServerLimits/closeLinger``. Not counted in ``open``.
        public var closing = 0
        /// Connections answered but closed at once, without the linger, because ``ServerLimits/maxClosing`` were
        /// being closed already: with unread input, the kernel's reset may reach the client before the answer.
        public var closedAtOnce = 0
        /// Connections closed because a request head or body, or the next request, did not arrive in time.
        public var timedOut = 0
    }

    private struct State {
        var book: ConnectionBook<ObjectIdentifier>
        var channels: [ObjectIdentifier: any Channel] = [:]
        var stats = Stats()
    }

    /// The limits in effect.
    public let limits: ServerLimits
    private let state: Mutex<State>

    /// A table for one listener.
    public init(limits: ServerLimits) {
        self.limits = limits
        state = Mutex(
            State(
                book: ConnectionBook(
                    maxConnections: limits.maxConnections,
                    maxConnectionsPerPeer: limits.maxConnectionsPerPeer
                )
            )
        )
    }

    /// What the listener did so far.
    public var stats: Stats {
        state.withLock { state in
            var stats = state.stats
            stats.awaitingRequest = state.book.evictableCount
            return stats
        }
    }

    /// How many connections `peer` (an IP address as ``peer(of:)`` gives it) holds.
    public func count(peer: String) -> Int { state.withLock { $0.book.count(peer: peer) } }

    /// The per-peer key of a channel: its remote IP address; nil for a unix socket (no per-peer limit).
    public static func peer(of channel: any Channel) -> String? {
        guard let address = channel.remoteAddress else { return nil }
        switch address {
        case .v4, .v6: return address.ipAddress
        case .unixDomainSocket: return nil
        }
    }

    /// Admits `channel` and tells the connections evicted to make room (their guards answer and close them), or
    /// refuses it (its guard answers and closes it).
    func admit(_ channel: any Channel) -> Admission {
        let id = ObjectIdentifier(channel)
        let peer = Self.peer(of: channel)
        let (admission, evicted) = state.withLock {
            state -> (ConnectionBook<ObjectIdentifier>.Admission, [any Channel]) in
            let admission = state.book.admit(id, peer: peer)
            guard case .admitted(let evicting) = admission else {
                state.stats.refused += 1
                return (admission, [])
            }
            state.channels[id] = channel
            state.stats.admitted += 1
            state.stats.evicted += evicting.count
            let evicted = evicting.compactMap { state.channels.removeValue(forKey: $0) }
            state.stats.open = state.book.count
            return (admission, evicted)
        }
        for other in evicted { other.pipeline.fireUserInboundEventTriggered(ConnectionGuard.Evicted()) }
        switch admission {
        case .admitted(let evicting): return .admitted(evicted: evicting.count)
        case .refusedPeerLimit: return .refused(peer: peer ?? "")
        case .refusedLimit: return .refused(peer: nil)
        }
    }

    /// What ``admit(_:)`` did.
    enum Admission: Equatable {
        /// Admitted, after closing `evicted` older connections that had not sent a request head.
        case admitted(evicted: Int)
        /// Refused: the peer's limit (when `peer` is set) or the listener's is reached, every connection busy.
        case refused(peer: String?)
    }

    /// Forgets a closed channel (nothing if it was evicted or never admitted).
    func release(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            state.book.remove(id)
            state.channels[id] = nil
            state.stats.open = state.book.count
        }
    }

    /// Marks `channel` as waiting for a request head (evictable) or busy with a request.
    func setEvictable(_ channel: any Channel, _ evictable: Bool) {
        state.withLock { $0.book.setEvictable(ObjectIdentifier(channel), evictable) }
    }

    /// Counts a connection answered and being closed (see ``Stats/closing``); false when
    /// ``ServerLimits/maxClosing`` are being closed already (then the caller closes it at once).
    func beginClosing() -> Bool {
        state.withLock { state in
            guard state.stats.closing < limits.maxClosing else {
                state.stats.closedAtOnce += 1
                return false
            }
            state.stats.closing += 1
            return true
        }
    }

    /// A connection counted by ``beginClosing()`` is closed.
    func endClosing() {
        state.withLock { $0.stats.closing = max(0, $0.stats.closing - 1) }
    }

    /// Counts a connection closed for a deadline.
    func countTimeout() {
        state.withLock { $0.stats.timedOut += 1 }
    }
}
