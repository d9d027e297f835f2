public import HummingbirdCore
public import Logging
public import NIOCore
import NIOSSL

/// A child channel that puts TLS (``ServerTLS``'s context in effect when the connection is accepted) in front of
/// another child channel's setup, so that the connection guards of ``GuardedHTTPServer`` stay as they are.
public struct TLSChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value

    let base: Base
    let tls: ServerTLS

    /// Wraps `base` in TLS.
    public init(_ base: Base, tls: ServerTLS) {
        self.base = base
        self.tls = tls
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let context = tls.context
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
