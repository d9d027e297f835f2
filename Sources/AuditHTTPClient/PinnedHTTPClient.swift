package import Foundation
import NIOCore
package import NIOHTTP1
import NIOPosix
package import NIOSSL
import Synchronization

/// An HTTP/1.1 client over TLS for a collector whose key is pinned (``CertificatePin``): what AsyncHTTPClient cannot
/// do, since it makes its TLS handlers itself and offers no hook into their verification.
///
/// Each connection verifies the collector's chain and host name as ``SyncTLS/configuration`` says (BoringSSL, as for
/// an unpinned request); then, once its handshake has completed and before any byte of a request is written on it,
/// the key of the certificate the collector presented (the leaf) must match one of the pins, else the connection is
/// closed and the request fails with ``Failure/pinMismatch(seen:)``. The check runs on the connection that carries
/// the request, so no other connection can stand in for it. (swift-nio-ssl's `customVerificationCallback` would
/// replace BoringSSL's verification instead of adding to it; its `_makeSSLClientHandler` with an additional
/// verification callback does what this does, at the same point, but is not a stable API.)
///
/// One idle connection is kept for the next request (the agent sends one at a time). A kept-alive connection the
/// collector closed before answering is replaced once by a new one: every request sent here is idempotent (reads,
/// and batches the collector de-duplicates).
package final class PinnedHTTPClient: Sendable {
    /// An answer: its status, headers and body.
    package struct Answer: Sendable {
        /// The status code.
        package var status: Int
        /// The response headers.
        package var headers: HTTPHeaders
        /// The body, whole.
        package var body: [UInt8]
        /// Whether the connection may carry another request.
        var keepAlive: Bool
    }

    /// Why a request got no answer (besides the TLS, socket and HTTP errors of SwiftNIO, passed on as they are).
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The collector's certificate is trusted, but its key matches no pin; `seen` is its pin.
        case pinMismatch(seen: CertificatePin)
        /// The handshake completed without a certificate from the collector.
        case noCertificate
        /// The deadline passed.
        case timeout
        /// The connection closed before the whole answer came; `answerStarted` if part of it had.
        case connectionLost(answerStarted: Bool)

        package var description: String {
            switch self {
            case .pinMismatch(let seen):
                "TLS: certificate pin mismatch: the collector's certificate has the key pin-sha256 \(seen), "
                    + "which is none of the pins configured (--pin-sha256)"
            case .noCertificate: "TLS: the collector presented no certificate"
            case .timeout: "timeout"
            case .connectionLost: "connection lost"
            }
        }
    }

    private let host: String
    private let port: Int
    /// The name sent in SNI and checked against the certificate; nil for an IP address (checked against its IP
    /// SANs by swift-nio-ssl).
    private let serverHostname: String?
    /// The `Host` header.
    private let hostHeader: String
    private let context: NIOSSLContext
    private let pins: Set<CertificatePin>
    private let connectTimeout: Duration
    private let reuseConnections: Bool
    private let idle = Mutex<(any Channel)?>(nil)

    /// A client of `https://host:port`.
    /// - Parameters:
    ///   - host: the collector's host name or IP address (IPv6 without brackets).
    ///   - port: its port.
    ///   - context: the TLS context (trust roots, client certificate), ``SyncTLS/pinnedContext``.
    ///   - pins: the pins the collector's certificate must match one of; never empty.
    ///   - connectTimeout: how long establishing a TCP connection may take (within each request's deadline).
    ///   - reuseConnections: whether a connection is kept for the next request; false closes it after each.
    package init(
        host: String,
        port: Int,
        context: NIOSSLContext,
        pins: Set<CertificatePin>,
        connectTimeout: Duration,
        reuseConnections: Bool = true
    ) {
        precondition(!pins.isEmpty, "a pinned client needs pins")
        self.host = host
        self.port = port
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        serverHostname = isAddress ? nil : host
        let name = host.contains(":") ? "[\(host)]" : host
        hostHeader = port == 443 ? name : "\(name):\(port)"
        self.context = context
        self.pins = pins
        self.connectTimeout = connectTimeout
        self.reuseConnections = reuseConnections
    }

    /// A client of `url`'s host and port (443 when it names none) with `tls`'s context and pins; nil when `tls`
    /// has no pins or `url` is not `https://` with a host.
    package convenience init?(url: URL, tls: SyncTLS, connectTimeout: Duration, reuseConnections: Bool) {
        guard url.scheme?.lowercased() == "https", let host = url.host, let context = tls.pinnedContext,
            !tls.pins.isEmpty
        else { return nil }
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        self.init(
            host: name,
            port: url.port ?? 443,
            context: context,
            pins: tls.pins,
            connectTimeout: connectTimeout,
            reuseConnections: reuseConnections
        )
    }

    deinit {
        idle.withLock { $0 }?.close(promise: nil)
    }

    /// The path and query of `url`, as a request line carries them (``execute(_:_:headers:body:timeout:maxResponseBytes:)``'s
    /// target).
    package static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? ""
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// Sends one request and reads its whole answer.
    /// - Parameters:
    ///   - method: the method.
    ///   - target: the path and query, starting with `/`.
    ///   - headers: headers besides `Host`, `Content-Length` and `Connection`, which the client sets.
    ///   - body: the body, nil for none.
    ///   - timeout: the deadline of the whole exchange: connection, handshake, request and answer.
    ///   - maxResponseBytes: the largest body read; a larger one fails the request with `NIOTooManyBytesError`.
    /// - Throws: ``Failure``, or SwiftNIO's error (connection refused, TLS verification failed, malformed answer).
    package func execute(
        _ method: HTTPMethod,
        _ target: String,
        headers: HTTPHeaders = [:],
        body: [UInt8]? = nil,
        timeout: Duration,
        maxResponseBytes: Int
    ) async throws -> Answer {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target)
        head.headers.add(name: "Host", value: hostHeader)
        head.headers.add(contentsOf: headers)
        if let body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
        if !reuseConnections { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        var kept = takeIdle()
        while true {
            let channel: any Channel
            if let kept { channel = kept } else { channel = try await connect(deadline: deadline) }
            do {
                let answer = try await exchange(on: channel, head: head, body: body, max: maxResponseBytes, deadline)
                if reuseConnections, answer.keepAlive { keepIdle(channel) } else { channel.close(promise: nil) }
                return answer
            } catch Failure.connectionLost(answerStarted: false) where kept != nil {
                // The collector closed the kept-alive connection (its idle deadline) before reading the request.
                channel.close(promise: nil)
                kept = nil
            } catch {
                channel.close(promise: nil)
                throw error
            }
        }
    }

    /// The idle connection, if it is still open.
    private func takeIdle() -> (any Channel)? {
        guard
            let channel = idle.withLock({ kept in
                defer { kept = nil }
                return kept
            })
        else { return nil }
        guard channel.isActive else {
            channel.close(promise: nil)
            return nil
        }
        return channel
    }

    /// Keeps `channel` for the next request (closing one kept before, which a concurrent request may have left).
    private func keepIdle(_ channel: any Channel) {
        idle.withLock { kept in
            let previous = kept
            kept = channel
            return previous
        }?.close(promise: nil)
    }

    /// A new connection whose handshake has completed and whose certificate matched a pin.
    private func connect(deadline: NIODeadline) async throws -> any Channel {
        let loop = HTTPClients.eventLoopGroup.next()
        let ready = loop.makePromise(of: Void.self)
        let context = self.context
        let serverHostname = self.serverHostname
        let pins = self.pins
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(min(TimeAmount(connectTimeout), deadline - .now()))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverHostname))
                    try sync.addHandler(PinCheckHandler(pins: pins, ready: ready))
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(AnswerHandler())
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            ready.fail(error)
            if case ChannelError.connectTimeout = error { throw Failure.timeout }
            throw error
        }
        do {
            try await Self.wait(for: ready, on: channel, until: deadline)
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return channel
    }

    /// Writes the request on `channel` and reads the answer.
    private func exchange(
        on channel: any Channel,
        head: HTTPRequestHead,
        body: [UInt8]?,
        max maxBytes: Int,
        _ deadline: NIODeadline
    ) async throws -> Answer {
        let promise = channel.eventLoop.makePromise(of: Answer.self)
        channel.eventLoop.execute {
            do {
                let handler = try channel.pipeline.syncOperations.handler(type: AnswerHandler.self)
                handler.send(head: head, body: body, maxBytes: maxBytes, promise: promise)
            } catch {
                promise.fail(error)
            }
        }
        return try await Self.wait(for: promise, on: channel, until: deadline)
    }

    /// The value of `promise`, failed with ``Failure/timeout`` at `deadline` or on cancellation (which close
    /// `channel`).
    private static func wait<Value: Sendable>(
        for promise: EventLoopPromise<Value>,
        on channel: any Channel,
        until deadline: NIODeadline
    ) async throws -> Value {
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            promise.fail(Failure.timeout)
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(CancellationError())
            channel.close(promise: nil)
        }
    }
}
