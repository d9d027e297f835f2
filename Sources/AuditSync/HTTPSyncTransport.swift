import AuditChain
public import AuditWire
import AsyncHTTPClient
public import Crypto
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import AuditStore

/// ``SyncTransport`` over HTTP(S) with AsyncHTTPClient: `POST <backend>/v1/audit/events` (docs/PROTOCOL.md).
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

    /// How long establishing a connection may take.
    static let connectTimeout: Duration = .seconds(10)

    /// The largest answer read (a response to the largest batch is far smaller).
    static let maxResponseBytes = 8 << 20

    /// One client for the process, never shut down (like `HTTPClient.shared`, with the settings delivery needs):
    /// a refused connection fails the request at once instead of being retried until the deadline (the engine
    /// has its own backoff), no redirects are followed, nothing is decompressed.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 2
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout.connect = .milliseconds(HTTPSyncTransport.connectTimeout.milliseconds)
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }()

    /// Creates a transport.
    /// - Parameters:
    ///   - backend: the backend's base URL, e.g. `http://127.0.0.1:8080` or `https://audit.example.com`.
    ///   - token: the bearer token, if the backend wants one.
    ///   - timeout: the whole request's deadline.
    ///   - tls: whom an `https://` backend's certificate must chain to, and the client certificate for mTLS; nil
    ///     for the system's roots and none.
    public init(backend: URL, token: String?, timeout: Duration = .seconds(30), tls: SyncTLS? = nil) {
        self.url = backend.appendingPathComponent("v1/audit/events")
        self.token = token
        self.timeout = timeout
        self.tls = tls
    }

    /// A request to `url` with the TLS settings and the token.
    private func request(_ url: URL, method: HTTPMethod) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        if let tls, url.scheme?.lowercased() == "https" { request.tlsConfiguration = tls.configuration }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        return request
    }

    /// The reason for a request that got no HTTP answer; a TLS failure says which (expired, unknown CA, host name).
    private func reason(for error: any Error) async -> String {
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
        var request = request(url, method: .POST)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: batch.batchId)
        request.body = .bytes(ByteBuffer(bytes: batch.json.canonicalBytes))
        do {
            let response = try await Self.client.execute(request, timeout: .milliseconds(timeout.milliseconds))
            let body = try await response.body.collect(upTo: Self.maxResponseBytes)
            return .response(
                status: Int(response.status.code),
                retryAfter: response.headers.first(name: "Retry-After"),
                body: Array(body.readableBytesView)
            )
        } catch {
            return .failure(await reason(for: error))
        }
    }

    public func isReachable() async -> Bool {
        let request = request(url, method: .GET)
        do {
            let response = try await Self.client.execute(request, timeout: .milliseconds(probeTimeout.milliseconds))
            // Any answer means the backend is back, whatever it says to a GET; the body is read only to free the
            // connection (a large one is cut short, which does not change the answer).
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return true
        } catch {
            return false
        }
    }

    public func collectorKey() async -> Curve25519.Signing.PublicKey? {
        let keyURL = url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("v1/collector/key")
        let request = request(keyURL, method: .GET)
        do {
            let response = try await Self.client.execute(request, timeout: .milliseconds(probeTimeout.milliseconds))
            let body = try await response.body.collect(upTo: 64 * 1024)
            guard response.status == .ok else { return nil }
            return try CollectorPublicKey.parse(Array(body.readableBytesView))
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
