public import HummingbirdCore
public import Logging

/// HTTP/1.1 servers whose connections are guarded by ``ConnectionGuard``: request deadlines and connection limits
/// of one listener, kept in its ``ConnectionTable``.
public enum GuardedHTTPServer: Sendable {
    /// The server builder to give Hummingbird's `Application(server:)`.
    /// - Parameters:
    ///   - table: the listener's connections and limits (one table per listener).
    ///   - logger: where refusals and expired deadlines are logged (at debug level: under attack they are many;
    ///     ``ConnectionTable/stats`` counts them).
    public static func http1(table: ConnectionTable, logger: Logger) -> HTTPServerBuilder {
        .http1(
            configuration: HTTP1Channel.Configuration(additionalChannelHandlers: [
                ConnectionGuard(table: table, logger: logger)
            ])
        )
    }

    /// The server builder for HTTPS: TLS with ``ServerTLS``'s context in effect when each connection is accepted,
    /// then the same guarded HTTP/1.1 channel as ``http1(table:logger:)``. The TLS handshake counts against the
    /// header deadline.
    public static func https(table: ConnectionTable, logger: Logger, tls: ServerTLS) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            TLSChildChannel(
                HTTP1Channel(
                    responder: responder,
                    configuration: HTTP1Channel.Configuration(additionalChannelHandlers: [
                        ConnectionGuard(table: table, logger: logger)
                    ])
                ),
                tls: tls
            )
        }
    }
}
