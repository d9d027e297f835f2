import AuditChain
public import AuditHTTPClient
public import AuditWire
import AsyncHTTPClient
public import Crypto
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import AuditStore

/// ``SyncTransport`` over HTTP(S) with AsyncHTTPClient: `POST <backend>/v1/audit/events` (docs/PROTOCOL.md). With
/// certificate pins (``SyncTLS/pins``), over ``PinnedHTTPClient``, which checks them on each connection.
///
/// Not URLSession: on Linux, FoundationNetworking spins a core while it waits for the answer to any request body
/// larger than 64 KiB (measured: 0.85 s of CPU per second of waiting), and a batch of 1000 entries is about 1 MB.
/// The agent would burn a core for every batch the backend takes time to verify.
public final class HTTPSyncTransport: SyncTransport {
    /// The events endpoint.
    public let url: URL
    private let token: String?
    private let timeout: Duration
    private let tls: SyncTLS?
    private let reuseConnections: Bool
    /// The client of an `https://` backend with pinned keys; nil without pins (AsyncHTTPClient then).
    private let pinned: PinnedHTTPClient?
    /// Why no request can be sent: pins for a backend that is not `https://` (nothing would check them).
    private let unusable: String?

    /// How long establishing a connection may take.
    static let connectTimeout: Duration = .seconds(10)

    /// The largest answer read (a response to the largest batch is far smaller).
    static let maxResponseBytes = 8 << 20

    /// One client for the process, never shut down (like `HTTPClient.shared`, with the settings delivery needs):
    /// a refused connection fails the request at once instead of being retried until the deadline (the engine
    /// has its own backoff), no redirects are followed, nothing is decompressed.
    private static let client = HTTPClients.make(connectTimeout: connectTimeout, connectionsPerHost: 2)

    /// Creates a transport.
    /// - Parameters:
    ///   - backend: the backend's base URL, e.g. `http://127.0.0.1:8080` or `https://audit.example.com`.
    ///   - token: the bearer token, if the backend wants one.
    ///   - timeout: the whole request's deadline.
    ///   - tls: whom an `https://` backend's certificate must chain to, the pins its key must match, and the client
    ///     certificate for mTLS; nil for the system's roots, no pin and no client certificate. With pins, every
    ///     request (the key fetch and the probe included) goes over ``PinnedHTTPClient``.
    public convenience init(backend: URL, token: String?, timeout: Duration = .seconds(30), tls: SyncTLS? = nil) {
        self.init(backend: backend, token: token, timeout: timeout, tls: tls, reuseConnections: true)
    }

    /// Creates a transport; `reuseConnections` false closes each connection after its request (the benchmark's
    /// "new connection per batch").
    package init(backend: URL, token: String?, timeout: Duration, tls: SyncTLS?, reuseConnections: Bool) {
        self.url = backend.appendingPathComponent("v1/audit/events")
        self.token = token
        self.timeout = timeout
        self.tls = tls
        self.reuseConnections = reuseConnections
        if let tls,
            let client = PinnedHTTPClient(
                url: backend,
                tls: tls,
                connectTimeout: Self.connectTimeout,
                reuseConnections: reuseConnections
            )
        {
            pinned = client
            unusable = nil
        } else {
            pinned = nil
            unusable =
                tls?.pins.isEmpty == false
                ? "certificate pins (pinSha256) need an https:// backend: nothing is sent to \(backend)" : nil
        }
    }

    /// What came back to one request.
    private struct Answer {
        var status: Int
        var retryAfter: String?
        var body: [UInt8]
    }

    /// Why a request was not sent.
    private struct Unusable: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends one request to `url` with the TLS settings and the token, and reads the answer up to `maxBytes`.
    /// - Throws: what the client threw: no answer, or a larger one (`NIOTooManyBytesError`).
    private func execute(
        _ url: URL,
        _ method: HTTPMethod,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: Duration,
        maxBytes: Int
    ) async throws -> Answer {
        if let unusable { throw Unusable(description: unusable) }
        var headers = headers
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if let pinned {
            let answer = try await pinned.execute(
                method,
                PinnedHTTPClient.target(of: url),
                headers: HTTPHeaders(headers),
                body: body,
                timeout: timeout,
                maxResponseBytes: maxBytes
            )
            return Answer(
                status: answer.status,
                retryAfter: answer.headers.first(name: "Retry-After"),
                body: answer.body
            )
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        if let tls, url.scheme?.lowercased() == "https" { request.tlsConfiguration = tls.configuration }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !reuseConnections { request.headers.add(name: "Connection", value: "close") }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await Self.client.execute(request, timeout: .milliseconds(timeout.milliseconds))
        let collected = try await response.body.collect(upTo: maxBytes)
        return Answer(
            status: Int(response.status.code),
            retryAfter: response.headers.first(name: "Retry-After"),
            body: Array(collected.readableBytesView)
        )
    }

    /// The reason for a request that got no HTTP answer; a TLS failure says which (expired, unknown CA, host name,
    /// pin mismatch).
    private func reason(for error: any Error) async -> String {
        if let error = error as? PinnedHTTPClient.Failure { return error.description }
        if let error = error as? Unusable { return error.description }
        if let host = url.host, url.scheme?.lowercased() == "https",
            let reason = await TLSDiagnosis.reason(for: error, host: host, port: url.port ?? 443)
        {
            return reason
        }
        return Self.describe(error)
    }

    /// How long a reachability probe waits for an answer: the request timeout, at most the connect timeout (a probe
    /// asks whether the backend answers at all; the engine waits for it before its next cycle). It was 1 s, which
    /// a loaded machine exceeded on loopback, so the backend stayed "down" although it answered.
    var probeTimeout: Duration { min(timeout, Self.connectTimeout) }

    public func send(_ batch: SyncBatch) async -> TransportOutcome {
        do {
            let answer = try await execute(
                url,
                .POST,
                headers: [("Content-Type", "application/json"), ("Idempotency-Key", batch.batchId)],
                body: batch.json.canonicalBytes,
                timeout: timeout,
                maxBytes: Self.maxResponseBytes
            )
            return .response(status: answer.status, retryAfter: answer.retryAfter, body: answer.body)
        } catch {
            return .failure(await reason(for: error))
        }
    }

    public func isReachable() async -> Bool {
        do {
            // Any answer means the backend is back, whatever it says to a GET; the body is read only to free the
            // connection (a large one is cut short, which does not change the answer).
            _ = try await execute(url, .GET, timeout: probeTimeout, maxBytes: 64 * 1024)
            return true
        } catch {
            return error is NIOTooManyBytesError
        }
    }

    public func collectorKey() async -> Curve25519.Signing.PublicKey? {
        let keyURL = url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("v1/collector/key")
        do {
            let answer = try await execute(keyURL, .GET, timeout: probeTimeout, maxBytes: 64 * 1024)
            guard answer.status == 200 else { return nil }
            return try CollectorPublicKey.parse(answer.body)
        } catch {
            return nil
        }
    }

    /// A short reason for a request that got no HTTP answer (what the outage is logged with).
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout: return "timeout"
            case .remoteConnectionClosed: return "connection lost"
            default: return "network error: \(error)"
            }
        }
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.contains(where: { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }) {
                return "connection refused"
            }
            return "cannot connect: \(error.connectionErrors.map { "\($0.error)" }.joined(separator: "; "))"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ECONNRESET, EPIPE: return "connection lost"
            default: return "network error: \(error)"
            }
        }
        return "network error: \(error)"
    }
}
