import AsyncHTTPClient
import AuditChain
import AuditHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The agent's ingest API over HTTP/1.1 (docs/OPERATIONS.md section 1.2): `POST /v1/events` with JSON Lines,
/// `GET /v1/status`.
/// One AsyncHTTPClient for the process, which keeps connections alive and supports unix sockets.
struct AgentTransport: Sendable {
    /// The process's client, never shut down. A connection that cannot be made fails its request at once (no
    /// retry until the deadline: the client's own buffer and backoff handle an agent that is down); up to 16
    /// connections per agent, for concurrent producers.
    static let client = HTTPClients.make(connectTimeout: .seconds(5), connectionsPerHost: 16)

    /// What a `POST /v1/events` came to. Only ``committed(_:)`` says the events are written and only ``refused(_:)``
    /// says one of them never can be (the two answers the agent's ingest API defines for that, docs/OPERATIONS.md
    /// section 1.2);
    /// every other answer is a ``retry(_:)``: nothing is dropped, the events are kept and sent again.
    enum Outcome: Sendable, Equatable {
        /// Committed: the events' seqs in order (a retried event answers its original seq).
        case committed([UInt64])
        /// A final refusal of one event of the request (nothing of the request was written).
        case refused(Refusal)
        /// Neither: the events are kept and retried.
        case retry(Retry)
    }

    /// A refusal the agent's protocol defines as final for one event: `400` naming its `line` (the event is invalid
    /// for the agent's catalogue) or `409` naming its `event` (its idempotency key is held by another event).
    struct Refusal: Sendable, Hashable {
        /// 409: the key is held by another event.
        var isConflict: Bool
        /// The refused event's 1-based position in the request.
        var position: Int
        var message: String
        var agentCode: String?
        var field: String?
    }

    /// An answer after which nothing can be taken as written and nothing as refused.
    struct Retry: Sendable, Hashable {
        enum Kind: Sendable, Hashable {
            /// No connection, no answer, or an answer saying "later" (408, 429, 5xx).
            case unavailable
            /// 413: the body is larger than the agent accepts; fewer events may go through.
            case tooLarge
            /// Any other answer: a 200 that is not `{"seqs": [...]}` of the right length, another 2xx, a 3xx, a 4xx
            /// naming no event of the request.
            case unexpected
        }
        var kind: Kind
        var message: String
        /// The agent's error code, when it answered one (`http413`, `http404`, ...).
        var agentCode: String?

        /// The error the caller sees (`ERR-107-090` for ``Kind/unavailable``, else `unexpected-answer`).
        var error: AuditClientError {
            var error = AuditClientError(kind == .unavailable ? .agentUnavailable : .unexpectedAnswer, message)
            error.agentCode = agentCode
            return error
        }
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
            return .retry(Retry(kind: .unavailable, message: "the agent at \(endpoint) did not answer: \(error)"))
        }
        return Self.outcome(status: status, answer: answer, count: events.count)
    }

    /// Reads an answer (pure): the one place that decides what a status and body mean to the client.
    static func outcome(status: Int, answer: [UInt8], count: Int) -> Outcome {
        let object = (try? JSONValue(parsing: answer))?.objectValue
        let message = object?["error"]?.stringValue ?? "no error message"
        func retry(_ kind: Retry.Kind, _ text: String) -> Outcome {
            .retry(Retry(kind: kind, message: text, agentCode: object?["code"]?.stringValue))
        }
        switch status {
        case 200:
            guard case .array(let values)? = object?["seqs"] else {
                return retry(.unexpected, "the agent answered 200 without seqs")
            }
            let seqs = values.compactMap { $0.integerValue.flatMap { $0 > 0 ? UInt64($0) : nil } }
            guard seqs.count == values.count, seqs.count == count else {
                return retry(.unexpected, "the agent answered \(values.count) seqs for \(count) events")
            }
            return .committed(seqs)
        case 400, 409:
            // The event is named by `line` in a 400 and by `event` in a 409; a refusal naming none (or one outside
            // the request) is not final for any event.
            let position = object?[status == 400 ? "line" : "event"]?.integerValue
            guard let position, position >= 1, position <= Int64(count) else {
                return retry(
                    .unexpected,
                    "the agent answered HTTP \(status) naming no event of the request: \(message)"
                )
            }
            return .refused(
                Refusal(
                    isConflict: status == 409,
                    position: Int(position),
                    message: message,
                    agentCode: object?["code"]?.stringValue,
                    field: object?["field"]?.stringValue
                )
            )
        case 413:
            return retry(.tooLarge, "the agent finds the request too large (HTTP 413): \(message)")
        case 408, 429, 500...599:
            return retry(.unavailable, "the agent cannot store events now (HTTP \(status)): \(message)")
        default:
            return retry(.unexpected, "the agent answered HTTP \(status), neither a commit nor a refusal: \(message)")
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
