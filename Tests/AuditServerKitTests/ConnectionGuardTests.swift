import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import AuditServerKit

/// What a connection's guard answers and when it closes, on embedded channels (HTTP parts in and out, virtual time:
/// the linger passes when the test advances the clock).
@Suite struct ConnectionGuardTests {
    /// Stands for a socket's half-close, which an embedded channel lacks (it closes wholly on any close): records
    /// that the output was shut and keeps the channel open.
    final class OutputShutdown: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPResponsePart
        private(set) var shut = false

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            guard mode == .output else { return context.close(mode: mode, promise: promise) }
            shut = true
            promise?.succeed(())
        }
    }

    /// A connected channel guarded as a connection of `table`'s listener.
    static func connect(_ table: ConnectionTable) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handlers: [
            OutputShutdown(), ConnectionGuard(table: table, logger: Logger(label: "test")),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Whether the guard shut the channel's output (see ``OutputShutdown``).
    static func outputShut(_ channel: EmbeddedChannel) throws -> Bool {
        try channel.pipeline.syncOperations.handler(type: OutputShutdown.self).shut
    }

    static let request = HTTPRequest(method: .post, scheme: nil, authority: "x", path: "/v1/events")

    /// The response parts written so far.
    static func written(_ channel: EmbeddedChannel) throws -> [HTTPResponsePart] {
        var parts: [HTTPResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
        return parts
    }

    /// A complete 503 with `Retry-After` and `Connection: close`, and nothing else.
    static func isUnavailable(_ parts: [HTTPResponsePart]) -> Bool {
        guard parts.count == 2, case .head(let head) = parts[0], case .end = parts[1] else { return false }
        return head.status == .serviceUnavailable
            && head.headerFields[.retryAfter] == "\(ServerLimits.retryAfterSeconds)"
            && head.headerFields[.connection] == "close" && head.headerFields[.contentLength] == "0"
    }

    @Test func aConnectionRefusedWhileEveryOneIsBusyIsAnswered503AndClosedAfterTheLinger() throws {
        let table = ConnectionTable(limits: ServerLimits(maxConnections: 1, maxConnectionsPerPeer: nil))
        let busy = try Self.connect(table)
        try busy.writeInbound(HTTPRequestPart.head(Self.request))
        let refused = try Self.connect(table)
        #expect(Self.isUnavailable(try Self.written(refused)))
        #expect(try Self.outputShut(refused))
        #expect(table.stats.refused == 1 && table.stats.open == 1 && table.stats.closing == 1)
        // What it sends meanwhile is read and never served.
        try refused.writeInbound(HTTPRequestPart.head(Self.request))
        #expect(try refused.readInbound(as: HTTPRequestPart.self) == nil)
        #expect(refused.isActive)
        refused.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!refused.isActive)
        #expect(table.stats.closing == 0)
        // The busy one was untouched.
        #expect(try busy.readInbound(as: HTTPRequestPart.self) != nil && busy.isActive)
    }

    @Test func anEvictedConnectionIsAnswered503AndTheNewOneIsServed() throws {
        let table = ConnectionTable(limits: ServerLimits(maxConnections: 1, maxConnectionsPerPeer: nil))
        let waiting = try Self.connect(table)
        let newer = try Self.connect(table)
        #expect(Self.isUnavailable(try Self.written(waiting)))
        #expect(try Self.written(newer).isEmpty && newer.isActive)
        #expect(table.stats.evicted == 1 && table.stats.open == 1)
        waiting.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!waiting.isActive)
    }

    @Test func aConnectionEvictedAsItsRequestArrivesIsServedAndClosedAfterTheResponse() throws {
        let table = ConnectionTable(limits: ServerLimits())
        let channel = try Self.connect(table)
        try channel.writeInbound(HTTPRequestPart.head(Self.request))
        // The table decided before the head reached the guard.
        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuard.Evicted())
        #expect(try Self.written(channel).isEmpty)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        let parts = try Self.written(channel)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head: \(parts)")
            return
        }
        #expect(head.status == .ok && head.headerFields[.connection] == "close")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func aResponseThatEndsTheConnectionIsFollowedByAClose() throws {
        let table = ConnectionTable(limits: ServerLimits(idleTimeout: .seconds(3600)))
        let channel = try Self.connect(table)
        // As the HTTP handler answers a malformed or oversize head: 400, Connection: close.
        let badRequest = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
        try channel.writeOutbound(HTTPResponsePart.head(badRequest))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(table.stats.open == 0 && table.stats.closing == 1)
        #expect(try Self.outputShut(channel))
        try channel.writeInbound(HTTPRequestPart.head(Self.request))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil)
        // The client closes once it has read the answer: closed at once, not after the linger.
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!channel.isActive)
        #expect(table.stats.closing == 0)
    }

    @Test func answeredConnectionsBeyondTheClosingCapAreClosedAtOnce() throws {
        let limits = ServerLimits(maxConnections: 4, maxConnectionsPerPeer: nil)
        #expect(limits.maxClosing == 1)
        let table = ConnectionTable(limits: limits)
        let busy = try (0..<4).map { _ in try Self.connect(table) }
        for channel in busy { try channel.writeInbound(HTTPRequestPart.head(Self.request)) }
        let lingering = try Self.connect(table)
        let closedAtOnce = try Self.connect(table)
        #expect(Self.isUnavailable(try Self.written(lingering)) && lingering.isActive)
        #expect(Self.isUnavailable(try Self.written(closedAtOnce)) && !closedAtOnce.isActive)
        #expect(table.stats.refused == 2 && table.stats.closing == 1)
        #expect(limits.filesHeld == 5)
    }
}
