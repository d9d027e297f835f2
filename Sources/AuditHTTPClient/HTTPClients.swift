package import AsyncHTTPClient
package import NIOCore
import NIOPosix

/// The package's AsyncHTTPClient set-up, in one place: every client (the agent's delivery, the collector's witness
/// calls, `auditctl`'s collector fetches, AuditClient's producers) runs on one event-loop group, SwiftNIO's shared
/// one, with the settings all of them need.
package enum HTTPClients {
    /// The event-loop group of every HTTP client of the process, ``PinnedHTTPClient``'s and the TLS diagnosis's
    /// connections included: SwiftNIO's shared group, never shut down.
    package static var eventLoopGroup: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    /// A client on ``eventLoopGroup``: a connection that cannot be made fails its request at once instead of being
    /// retried until the deadline (every caller has its own backoff or gives up), no redirect is followed, nothing
    /// is decompressed.
    /// - Parameters:
    ///   - connectTimeout: how long establishing a connection may take.
    ///   - connectionsPerHost: the HTTP/1.1 connections kept per host (AsyncHTTPClient's soft limit); nil for its
    ///     default (8).
    package static func make(connectTimeout: Duration, connectionsPerHost: Int? = nil) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        if let connectionsPerHost {
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
        }
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        let milliseconds = connectTimeout / .milliseconds(1)
        configuration.timeout.connect = .milliseconds(Int64(milliseconds.rounded()))
        return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }
}
