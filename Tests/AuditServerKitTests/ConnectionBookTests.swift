import Testing

@testable import AuditServerKit

/// The admission rule and the deadlines, without sockets.
@Suite struct ConnectionBookTests {
    @Test func underTheLimitsEveryConnectionIsAdmitted() {
        var book = ConnectionBook<Int>(maxConnections: 3, maxConnectionsPerPeer: 2)
        #expect(book.admit(1, peer: "a") == .admitted(evicting: []))
        #expect(book.admit(2, peer: "b") == .admitted(evicting: []))
        #expect(book.count == 2)
        #expect(book.count(peer: "a") == 1)
    }

    @Test func atThePeerLimitTheOldestWaitingConnectionOfThatPeerMakesRoom() {
        var book = ConnectionBook<Int>(maxConnections: 10, maxConnectionsPerPeer: 2)
        _ = book.admit(1, peer: "a")
        _ = book.admit(2, peer: "b")
        _ = book.admit(3, peer: "a")
        #expect(book.admit(4, peer: "a") == .admitted(evicting: [1]))
        #expect(book.count(peer: "a") == 2)
        #expect(book.count(peer: "b") == 1)
        // Busy connections are never evicted: with both of "a"'s busy, a third is refused.
        book.setEvictable(3, false)
        book.setEvictable(4, false)
        #expect(book.admit(5, peer: "a") == .refusedPeerLimit)
        #expect(book.count == 3)
    }

    @Test func atTheListenerLimitTheOldestWaitingConnectionMakesRoom() {
        var book = ConnectionBook<Int>(maxConnections: 3, maxConnectionsPerPeer: nil)
        _ = book.admit(1, peer: "a")
        _ = book.admit(2, peer: "b")
        _ = book.admit(3, peer: "c")
        book.setEvictable(1, false)
        #expect(book.admit(4, peer: "d") == .admitted(evicting: [2]))
        book.setEvictable(3, false)
        book.setEvictable(4, false)
        #expect(book.admit(5, peer: "e") == .refusedLimit)
        // A connection that finished its request waits again and can make room.
        book.setEvictable(1, true)
        #expect(book.admit(5, peer: "e") == .admitted(evicting: [1]))
        #expect(book.count == 3)
    }

    @Test func unixSocketPeersHaveNoPerPeerLimit() {
        var book = ConnectionBook<Int>(maxConnections: 2, maxConnectionsPerPeer: 1)
        #expect(book.admit(1, peer: nil) == .admitted(evicting: []))
        #expect(book.admit(2, peer: nil) == .admitted(evicting: []))
        #expect(book.admit(3, peer: nil) == .admitted(evicting: [1]))
    }

    @Test func removingForgetsTheConnectionAndItsPeerCount() {
        var book = ConnectionBook<Int>(maxConnections: 2, maxConnectionsPerPeer: 1)
        _ = book.admit(1, peer: "a")
        let removed = book.remove(1)
        let removedTwice = book.remove(1)
        #expect(removed)
        #expect(!removedTwice)
        #expect(book.count(peer: "a") == 0)
        #expect(book.admit(2, peer: "a") == .admitted(evicting: []))
    }

    @Test func deadlinesFollowTheRequest() {
        let limits = ServerLimits(
            headerTimeout: .seconds(1),
            bodyTimeout: .seconds(2),
            idleTimeout: .seconds(3),
            maxConnections: 1,
            maxConnectionsPerPeer: nil
        )
        var deadlines = RequestDeadlines(limits: limits)
        #expect(deadlines.started() == .arm(.seconds(1), .header))
        #expect(deadlines.evictable)
        #expect(deadlines.received(.head) == .arm(.seconds(2), .body))
        #expect(!deadlines.evictable)
        // Body bytes do not extend the body's deadline.
        #expect(deadlines.received(.body) == .keep)
        #expect(deadlines.received(.end) == .disarm)
        #expect(!deadlines.evictable)
        #expect(deadlines.respondedOnce() == .arm(.seconds(3), .idle))
        #expect(deadlines.evictable)
    }

    @Test func anAnswerBeforeTheBodyEndsKeepsTheBodyDeadline() {
        var deadlines = RequestDeadlines(limits: ServerLimits())
        _ = deadlines.received(.head)
        // A 401 or 413 written before the body is in: the body's deadline still runs while it drains.
        #expect(deadlines.respondedOnce() == .keep)
        #expect(!deadlines.evictable)
        #expect(deadlines.received(.end) == .arm(ServerLimits().idleTimeout, .idle))
        #expect(deadlines.evictable)
    }

    @Test func limitsThatCannotWorkAreNamed() {
        #expect(ServerLimits().problem == nil)
        #expect(ServerLimits(headerTimeout: .zero).problem != nil)
        #expect(ServerLimits(maxConnections: 0).problem != nil)
        #expect(ServerLimits(maxConnectionsPerPeer: 0).problem != nil)
    }
}
