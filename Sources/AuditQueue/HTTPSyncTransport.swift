import AuditChain
public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``SyncTransport`` over HTTP with URLSession: `POST <backend>/v1/audit/events` (docs/PROTOCOL.md).
public final class HTTPSyncTransport: SyncTransport {
    /// The events endpoint.
    public let url: URL
    private let token: String?
    private let session: URLSession
    private let timeout: Duration

    /// Creates a transport.
    /// - Parameters:
    ///   - backend: the backend's base URL, e.g. `http://127.0.0.1:8080`.
    ///   - token: the bearer token, if the backend wants one.
    ///   - timeout: the whole request's deadline.
    public init(backend: URL, token: String?, timeout: Duration = .seconds(30)) {
        self.url = backend.appendingPathComponent("v1/audit/events")
        self.token = token
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Double(timeout.milliseconds) / 1000
        configuration.timeoutIntervalForResource = Double(timeout.milliseconds) / 1000
        configuration.httpMaximumConnectionsPerHost = 2
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    public func send(_ batch: SyncBatch) async -> TransportOutcome {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(batch.batchId, forHTTPHeaderField: "Idempotency-Key")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(batch.json.canonicalBytes)
        request.timeoutInterval = Double(timeout.milliseconds) / 1000
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { return .failure("not an HTTP response") }
            return .response(
                status: http.statusCode,
                retryAfter: http.value(forHTTPHeaderField: "Retry-After"),
                body: Array(data)
            )
        } catch {
            return .failure(Self.describe(error))
        }
    }

    public func isReachable() async -> Bool {
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.timeoutInterval = 1
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        do {
            let (_, response) = try await session.data(for: request)
            return response is HTTPURLResponse
        } catch {
            return false
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? URLError {
            switch error.code {
            case .timedOut: return "timeout"
            case .cannotConnectToHost: return "connection refused"
            case .networkConnectionLost: return "connection lost"
            default: return "network error \(error.code.rawValue): \(error.localizedDescription)"
            }
        }
        return "network error: \(error)"
    }
}
