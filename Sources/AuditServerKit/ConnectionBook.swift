/// The connections one listener holds and the rule that admits a new one (pure: no sockets, no clock).
///
/// A new connection is admitted while the listener and its peer are under their limits. At a limit it replaces the
/// oldest *evictable* connection in the same set (the peer's, or the listener's): one that has not sent a complete
/// request head yet. When there is none, every held connection is busy with a request and the new one is refused.
struct ConnectionBook<ID: Hashable> {
    /// One held connection.
    struct Entry {
        /// The remote address (nil: no per-peer limit, as for a unix socket).
        var peer: String?
        /// Admission order: lower is older.
        var order: UInt64
        /// Whether it is waiting for a request head (a new or idle keep-alive connection).
        var evictable: Bool
    }

    /// What became of a new connection.
    enum Admission: Equatable {
        /// Admitted; the listed connections must be closed to make room.
        case admitted(evicting: [ID])
        /// Refused: the peer's limit is reached and each of its connections is busy.
        case refusedPeerLimit
        /// Refused: the listener's limit is reached and each connection is busy.
        case refusedLimit
    }

    let maxConnections: Int
    let maxConnectionsPerPeer: Int?
    private(set) var entries: [ID: Entry] = [:]
    private var perPeer: [String: Int] = [:]
    private var nextOrder: UInt64 = 0

    init(maxConnections: Int, maxConnectionsPerPeer: Int?) {
        self.maxConnections = max(1, maxConnections)
        self.maxConnectionsPerPeer = maxConnectionsPerPeer.map { max(1, $0) }
    }

    /// How many connections are held.
    var count: Int { entries.count }

    /// How many connections wait for a request head.
    var evictableCount: Int { entries.values.count(where: \.evictable) }

    /// How many connections `peer` holds.
    func count(peer: String) -> Int { perPeer[peer] ?? 0 }

    /// Admits `id` from `peer` (evictable until ``setEvictable(_:_:)`` says otherwise), or refuses it.
    mutating func admit(_ id: ID, peer: String?) -> Admission {
        var evicting: [ID] = []
        if let peer, let cap = maxConnectionsPerPeer, count(peer: peer) >= cap {
            guard let oldest = oldestEvictable(peer: peer) else { return .refusedPeerLimit }
            remove(oldest)
            evicting.append(oldest)
        }
        if entries.count >= maxConnections {
            guard let oldest = oldestEvictable(peer: nil) else {
                // Not reached after a per-peer eviction (it made room); nothing has changed otherwise.
                return .refusedLimit
            }
            remove(oldest)
            evicting.append(oldest)
        }
        entries[id] = Entry(peer: peer, order: nextOrder, evictable: true)
        nextOrder += 1
        if let peer { perPeer[peer, default: 0] += 1 }
        return .admitted(evicting: evicting)
    }

    /// Forgets `id` (closed); false if it was not held.
    @discardableResult
    mutating func remove(_ id: ID) -> Bool {
        guard let entry = entries.removeValue(forKey: id) else { return false }
        if let peer = entry.peer {
            let left = (perPeer[peer] ?? 1) - 1
            perPeer[peer] = left > 0 ? left : nil
        }
        return true
    }

    /// Marks `id` as waiting for a request head (evictable) or busy with a request.
    mutating func setEvictable(_ id: ID, _ evictable: Bool) {
        entries[id]?.evictable = evictable
    }

    /// The oldest evictable connection, of `peer` when given.
    private func oldestEvictable(peer: String?) -> ID? {
        var best: (id: ID, order: UInt64)?
        for (id, entry) in entries where entry.evictable && (peer == nil || entry.peer == peer) {
            if let current = best, current.order < entry.order { continue }
            best = (id, entry.order)
        }
        return best?.id
    }
}
