import HummingbirdCore
public import Logging
public import NIOCore
public import NIOHTTPTypes

/// One per connection, after HTTP decoding: admits the connection into its listener's ``ConnectionTable`` (or
/// closes it) and closes it when a request head, a body or the next request does not arrive in time
/// (``RequestDeadlines``). Added to each connection by ``GuardedHTTPServer``.
public final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let table: ConnectionTable
    private let logger: Logger
    private var deadlines: RequestDeadlines
    private var timer: Scheduled<Void>?
    private var admitted = false
    private var started = false

    /// A guard for one connection of the listener whose connections `table` holds.
    public init(table: ConnectionTable, logger: Logger) {
        self.table = table
        self.logger = logger
        deadlines = RequestDeadlines(limits: table.limits)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stop(context)
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stop(context)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part: RequestDeadlines.RequestPart =
            switch unwrapInboundIn(data) {
            case .head: .head
            case .body: .body
            case .end: .end
            }
        apply(deadlines.received(part), context)
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { apply(deadlines.respondedOnce(), context) }
        context.write(data, promise: promise)
    }

    /// Admits the connection and arms the header deadline, once.
    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        switch table.admit(context.channel) {
        case .admitted(let evicted):
            admitted = true
            if evicted > 0 {
                logger.debug(
                    "closed connections that had sent no request, to make room",
                    metadata: ["evicted": "\(evicted)"]
                )
            }
            apply(deadlines.started(), context)
        case .refused(let peer):
            logger.debug(
                "connection refused: every held connection is busy with a request",
                metadata: peer.map { ["peer": "\($0)"] } ?? [:]
            )
            context.close(promise: nil)
        }
    }

    private func stop(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if admitted {
            admitted = false
            table.release(context.channel)
        }
    }

    private func apply(_ action: RequestDeadlines.Action, _ context: ChannelHandlerContext) {
        if admitted { table.setEvictable(context.channel, deadlines.evictable) }
        switch action {
        case .keep:
            return
        case .disarm:
            timer?.cancel()
            timer = nil
        case .arm(let duration, let expiry):
            timer?.cancel()
            let nanoseconds =
                duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
                self.expired(expiry, context)
            }
        }
    }

    private func expired(_ expiry: RequestDeadlines.Expiry, _ context: ChannelHandlerContext) {
        timer = nil
        guard admitted else { return }
        table.countTimeout()
        logger.debug("closing a connection: deadline passed", metadata: ["waitingFor": "\(expiry.rawValue)"])
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension ConnectionGuard: Sendable {}
