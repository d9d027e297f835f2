import NIOCore
import NIOHTTP1
import NIOSSL
import NIOTLS

/// The channel handlers of a ``PinnedHTTPClient`` connection: `NIOSSLClientHandler`, ``PinCheckHandler``, SwiftNIO's
/// HTTP/1.1 client codec, ``AnswerHandler``.
extension PinnedHTTPClient {
    /// Completes `ready` when the TLS handshake has completed and the collector's certificate matched a pin; fails it
    /// (and closes the connection) when it did not, or on any error or close before. Nothing is written on the
    /// connection before `ready` succeeds.
    final class PinCheckHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        private let pins: Set<CertificatePin>
        private let ready: EventLoopPromise<Void>

        init(pins: Set<CertificatePin>, ready: EventLoopPromise<Void>) {
            self.pins = pins
            self.ready = ready
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // NIOSSLClientHandler sends this after BoringSSL verified the chain and it checked the host name.
            if case .handshakeCompleted = event as? TLSUserEvent {
                let handler = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                if let leaf = handler?.peerCertificate, let seen = try? CertificatePin(certificate: leaf) {
                    if pins.contains(seen) {
                        ready.succeed()
                    } else {
                        ready.fail(Failure.pinMismatch(seen: seen))
                        context.close(promise: nil)
                    }
                } else {
                    ready.fail(Failure.noCertificate)
                    context.close(promise: nil)
                }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            ready.fail(error)
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            ready.fail(Failure.connectionLost(answerStarted: false))
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            // A promise completed already stays as it is.
            ready.fail(Failure.connectionLost(answerStarted: false))
        }
    }

    /// Writes one request at a time and gathers its answer, up to a size.
    final class AnswerHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        /// The request in flight.
        private struct Pending {
            var promise: EventLoopPromise<Answer>
            var maxBytes: Int
            var head: HTTPResponseHead?
            var body: ByteBuffer
        }

        private var pending: Pending?
        private var context: ChannelHandlerContext?

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            fail(Failure.connectionLost(answerStarted: pending?.head != nil))
            self.context = nil
        }

        /// Writes a request; `promise` gets its answer.
        func send(head: HTTPRequestHead, body: [UInt8]?, maxBytes: Int, promise: EventLoopPromise<Answer>) {
            guard let context, context.channel.isActive else {
                promise.fail(Failure.connectionLost(answerStarted: false))
                return
            }
            guard pending == nil else {
                promise.fail(ChannelError.inappropriateOperationForState)
                return
            }
            pending = Pending(
                promise: promise,
                maxBytes: maxBytes,
                head: nil,
                body: context.channel.allocator.buffer(capacity: 0)
            )
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if let body {
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))),
                    promise: nil
                )
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard var current = pending else {
                // An answer to nothing: the connection is out of step.
                context.close(promise: nil)
                return
            }
            switch unwrapInboundIn(data) {
            case .head(let head):
                // 1xx answers (100 Continue) precede the real one; none is asked for, any is skipped.
                guard head.status.code >= 200 || head.status == .switchingProtocols else { return }
                current.head = head
                pending = current
            case .body(var part):
                guard current.body.readableBytes + part.readableBytes <= current.maxBytes else {
                    fail(NIOTooManyBytesError(maxBytes: current.maxBytes))
                    context.close(promise: nil)
                    return
                }
                pending = nil
                current.body.writeBuffer(&part)
                pending = current
            case .end:
                pending = nil
                guard let head = current.head else {
                    current.promise.fail(Failure.connectionLost(answerStarted: true))
                    context.close(promise: nil)
                    return
                }
                current.promise.succeed(
                    Answer(
                        status: Int(head.status.code),
                        headers: head.headers,
                        body: Array(current.body.readableBytesView),
                        keepAlive: head.isKeepAlive
                    )
                )
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A reset, a broken pipe or a close without close_notify is a lost connection (which a kept-alive one
            // may be replaced over); other TLS and HTTP errors are passed on as they are.
            var lost = error is IOError
            if case NIOSSLError.uncleanShutdown = error { lost = true }
            fail(lost ? Failure.connectionLost(answerStarted: pending?.head != nil) : error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            fail(Failure.connectionLost(answerStarted: pending?.head != nil))
            context.fireChannelInactive()
        }

        private func fail(_ error: any Error) {
            guard let current = pending else { return }
            pending = nil
            current.promise.fail(error)
        }
    }
}
