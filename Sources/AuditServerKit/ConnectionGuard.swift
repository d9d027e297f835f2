import HTTPTypes
import HummingbirdCore
public import Logging
public import NIOCore
public import NIOHTTPTypes

/// One per connection, after HTTP decoding: admits the connection into its listener's ``ConnectionTable``, closes it
/// when a request head, a body or the next request does not arrive in time (``RequestDeadlines``), and answers
/// rather than resets what it cannot serve: a connection refused or evicted by the table is answered
/// `503 Service Unavailable` with `Retry-After`, and a response that ends the connection (`Connection: close`, as
/// the 400 for a malformed or oversize request head) is followed by a close. Added to each connection by
/// ``GuardedHTTPServer``.
///
/// Closing after an answer: the output is shut (the client reads the answer, then the end of the stream), the input
/// is read and discarded until the client closes or ``ServerLimits/closeLinger`` passes, then the socket is closed.
/// Closing at once would make the kernel reset a connection whose request is unread, and a reset can reach the
/// client before the answer.
public final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    /// The event a ``ConnectionTable`` sends to a connection it evicted to make room for a new one.
    struct Evicted: Sendable {}

    /// How the connection ends, once it is to end.
    private enum Ending {
        /// After the response being written (the request is the server's already): `Connection: close` is added.
        case afterResponse
        /// Answered: its output shut, its input discarded until the client closes or the linger passes.
        case closing
    }

    private let table: ConnectionTable
    private let logger: Logger
    private var deadlines: RequestDeadlines
    private var timer: Scheduled<Void>?
    private var admitted = false
    private var started = false
    private var ending: Ending?
    private var countedClosing = false

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
        // Answered and closing: what the client still sends is read and discarded, never served.
        if ending == .closing { return }
        let part: RequestDeadlines.RequestPart =
            switch unwrapInboundIn(data) {
            case .head: .head
            case .body: .body
            case .end: .end
            }
        apply(deadlines.received(part), context)
        context.fireChannelRead(data)
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        // Keeps reading while closing, whatever the handlers after this one want.
        if ending == .closing { context.read() }
        context.fireChannelReadComplete()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is Evicted {
            evicted(context)
            return
        }
        if ending == .closing, let event = event as? ChannelEvent, event == .inputClosed {
            // The client read the answer and closed: nothing can be reset now.
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // While closing, the decoder's complaints about discarded input are nobody's business.
        if ending == .closing { return }
        context.fireErrorCaught(error)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            if ending == .afterResponse {
                head.headerFields[.connection] = "close"
                context.write(wrapOutboundOut(.head(head)), promise: promise)
                return
            }
            if head.headerFields[.connection]?.lowercased().contains("close") == true { ending = .afterResponse }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            apply(deadlines.respondedOnce(), context)
            context.write(data, promise: promise)
            if ending == .afterResponse { close(context) }
        }
    }

    /// Admits the connection and arms the header deadline, or answers 503 and closes it; once.
    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        switch table.admit(context.channel) {
        case .admitted(let evicted):
            admitted = true
            if evicted > 0 {
                logger.debug(
                    "answered 503 to connections that had sent no request, to make room",
                    metadata: ["evicted": "\(evicted)"]
                )
            }
            apply(deadlines.started(), context)
        case .refused(let peer):
            logger.debug(
                "connection answered 503: every held connection is busy with a request",
                metadata: peer.map { ["peer": "\($0)"] } ?? [:]
            )
            answerUnavailable(context)
        }
    }

    /// The table evicted this connection: answered 503 if it waits for a request head; if the request's head
    /// arrived meanwhile, served, and closed after its response.
    private func evicted(_ context: ChannelHandlerContext) {
        // The table has forgotten it already.
        admitted = false
        guard ending == nil else { return }
        if deadlines.evictable {
            answerUnavailable(context)
        } else {
            ending = .afterResponse
        }
    }

    /// Writes a complete `503 Service Unavailable` with `Retry-After` and `Connection: close`, then closes.
    private func answerUnavailable(_ context: ChannelHandlerContext) {
        let head = HTTPResponse(
            status: .serviceUnavailable,
            headerFields: [
                .retryAfter: "\(ServerLimits.retryAfterSeconds)", .connection: "close", .contentLength: "0",
            ]
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        close(context)
    }

    /// Flushes the answer, shuts the output, and reads and discards the input until the client closes or the
    /// linger passes (at once when too many connections are being closed already).
    private func close(_ context: ChannelHandlerContext) {
        guard ending != .closing else { return }
        ending = .closing
        timer?.cancel()
        timer = nil
        if admitted {
            admitted = false
            table.release(context.channel)
        }
        context.flush()
        guard table.beginClosing() else {
            context.close(promise: nil)
            return
        }
        countedClosing = true
        // Fails when the output is shut already (the HTTP handler finished it): the linger goes on.
        context.close(mode: .output, promise: nil)
        let linger = ServerLimits.closeLinger
        let nanoseconds = linger.components.seconds * 1_000_000_000 + linger.components.attoseconds / 1_000_000_000
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
            context.close(promise: nil)
        }
        context.read()
    }

    private func stop(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if admitted {
            admitted = false
            table.release(context.channel)
        }
        if countedClosing {
            countedClosing = false
            table.endClosing()
        }
    }

    private func apply(_ action: RequestDeadlines.Action, _ context: ChannelHandlerContext) {
        if admitted { table.setEvictable(context.channel, deadlines.evictable) }
        guard ending != .closing else { return }
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
        guard ending != .closing else { return }
        table.countTimeout()
        logger.debug("closing a connection: deadline passed", metadata: ["waitingFor": "\(expiry.rawValue)"])
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension ConnectionGuard: Sendable {}
