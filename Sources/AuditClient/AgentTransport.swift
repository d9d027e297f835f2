import AsyncHTTPClient
import AuditChain
import Foundation
import NIOCore
import NIOHTTP1

/// The agent's ingest API over HTTP/1.1 (contrib/README.md): `POST /v1/events` with JSON Lines, `GET /v1/status`.
/// One AsyncHTTPClient for the process, which keeps connections alive and supports unix sockets.
struct AgentTransport: Sendable {
    /// The process's client, never shut down. A connection that cannot be made fails its request at once (no
    /// retry until the deadline: the client's own buffer and backoff handle an agent that is down); up to 16
    /// connections per agent, for concurrent producers.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout.connect = .seconds(5)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// What a `POST /v1/events` came to.
    enum Outcome: Sendable, Equatable {
        /// Committed: the events' seqs in order (a retried event answers its original seq).
        case committed([UInt64])
        /// Nothing can be said to be written: no connection, no answer, or an answer saying "later".
        case unavailable(String)
        /// The agent refused the batch (nothing of it was written): the HTTP status and its error object.
        case refused(status: Int, message: String, agentCode: String?, line: Int?, field: String?)
        /// A 200 whose body is not the expected answer.
        case unexpected(String)
    }

    let endpoint: AuditClientConfiguration.Endpoint
    let timeout: Duration

    /// Largest answer read.
    static let maxAnswerBytes = 1 << 20

    func url(_ path: String) -> String {
        switch endpoint {
        case .unixSocket(let socket):
            URL(httpURLWithSocketPath: socket, uri: path)?.absoluteString ?? "http+unix://invalid\(path)"
        case .loopback:
            "http://\(endpoint)\(path)"
        }
    }

    /// The request body: one event per line, as producer input.
    static func body(_ events: [AuditEvent]) -> [UInt8] {
        var bytes: [UInt8] = []
        for event in events {
            bytes += ClientBufferFile.input(event).canonicalBytes
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// Posts `events` in one request (one commit on the agent).
    func post(_ events: [AuditEvent]) async -> Outcome {
        var request = HTTPClientRequest(url: url("/v1/events"))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-ndjson")
        let body = Self.body(events)
        request.body = .bytes(ByteBuffer(bytes: body))
        let status: Int
        let answer: [UInt8]
        do {
            let response = try await Self.client.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
            status = Int(response.status.code)
            answer = Array(try await response.body.collect(upTo: Self.maxAnswerBytes).readableBytesView)
        } catch {
            return .unavailable("the agent at \(endpoint) did not answer: \(error)")
        }
        return Self.outcome(status: status, answer: answer, count: events.count)
    }

    /// Reads an answer (pure).
    static func outcome(status: Int, answer: [UInt8], count: Int) -> Outcome {
        let object = (try? JSONValue(parsing: answer))?.objectValue
        switch status {
        case 200:
            guard case .array(let values)? = object?["seqs"] else { return .unexpected("the answer has no seqs") }
            let seqs = values.compactMap { $0.integerValue.flatMap { $0 > 0 ? UInt64($0) : nil } }
            guard seqs.count == values.count, seqs.count == count else {
                return .unexpected("the answer has \(values.count) seqs for \(count) events")
            }
            return .committed(seqs)
        case 408, 429, 500...599:
            let message = object?["error"]?.stringValue ?? "HTTP \(status)"
            return .unavailable("the agent cannot store events now: \(message)")
        default:
            let line = object?["line"]?.integerValue ?? object?["event"]?.integerValue
            return .refused(
                status: status,
                message: object?["error"]?.stringValue ?? "HTTP \(status)",
                agentCode: object?["code"]?.stringValue,
                line: line.flatMap { $0 >= 1 && $0 <= Int64(count) ? Int($0) : nil },
                field: object?["field"]?.stringValue
            )
        }
    }

    /// Asks `GET /v1/status`: whether the agent answers.
    /// - Throws: ``AuditClientError/Code/agentUnavailable`` when it does not answer 200.
    func checkReachable() async throws(AuditClientError) {
        var request = HTTPClientRequest(url: url("/v1/status"))
        request.method = .GET
        let status: UInt
        do {
            let response = try await Self.client.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
            status = response.status.code
            _ = try await response.body.collect(upTo: Self.maxAnswerBytes)
        } catch {
            throw AuditClientError(.agentUnavailable, "the agent at \(endpoint) did not answer: \(error)")
        }
        guard status == 200 else {
            throw AuditClientError(.agentUnavailable, "the agent at \(endpoint) answered HTTP \(status) to its status")
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowSum ? .max : sum
    }
}
