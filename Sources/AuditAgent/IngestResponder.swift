import AuditChain
import AuditServerKit
import AuditStore
import AuditSync
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The ingest API (docs/OPERATIONS.md section 1.2): `POST /v1/events` appends one event or JSON Lines (all or
/// nothing) and answers `{"seqs": [...]}` after the commit; `GET /v1/status` answers the delivery status. Every error is a
/// JSON object `{"error", "code", "line"?, "field"?}`; the server stays up after bad input.
struct IngestResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let log: AuditLog
    let engine: SyncEngine?
    let policy: DeliveryPolicy
    let maxBodyBytes: Int
    let logger: Logger

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        switch request.uri.path {
        case "/v1/events":
            guard request.method == .post else { return Self.methodNotAllowed("POST") }
            return await postEvents(request)
        case "/v1/status":
            guard request.method == .get || request.method == .head else { return Self.methodNotAllowed("GET") }
            return status()
        default:
            return Self.error(.notFound, "no such endpoint: use POST /v1/events or GET /v1/status")
        }
    }

    func postEvents(_ request: Request) async -> Response {
        let body: [UInt8]
        do throws(BoundedBody.Refusal) {
            body = try await BoundedBody.read(request, maxBytes: maxBodyBytes)
        } catch {
            return Self.error(error.status, error.message)
        }
        // What the producer sent: an event without `occurredAt` is stamped now, and its retry is compared with the
        // original apart from the stamps (docs/CATALOGUE.md, "Idempotency keys and retries").
        let events: [ProducerEvent]
        do {
            events = try AuditEvent.decodeProducerInput(
                body,
                catalogue: log.configuration.catalogue,
                now: .now(),
                makeIdempotencyKey: { UUID().uuidString.lowercased() }
            )
        } catch {
            return refused(error)
        }
        do {
            let receipts = try await log.append(events)
            engine?.notify()
            let seqs = receipts.map(\.seq)
            // Retries answer the original seqs; `duplicates` says how many events were already in the log.
            let duplicates = receipts.count(where: \.isDuplicate)
            logger.debug(
                "events appended",
                metadata: [
                    "count": "\(seqs.count)", "firstSeq": "\(seqs.first ?? 0)", "lastSeq": "\(seqs.last ?? 0)",
                    "duplicates": "\(duplicates)",
                ]
            )
            var answer: [String: JSONValue] = ["seqs": .array(seqs.map { .integer(Int64($0)) })]
            if duplicates > 0 { answer["duplicates"] = .integer(Int64(duplicates)) }
            return Self.json(.ok, .object(answer))
        } catch let error as AuditEventError {
            return refused(error)
        } catch let error as IdempotencyConflict {
            return conflict(error)
        } catch {
            logger.error("append failed", metadata: ["error": "\(error)"])
            return Self.error(.serviceUnavailable, "the event could not be stored; nothing was written; retry later")
        }
    }

    /// A 400 naming the line and field; logged without the values (they may be payload).
    func refused(_ error: AuditEventError) -> Response {
        logger.notice(
            "events refused",
            metadata: [
                "code": "\(error.code)", "line": "\(error.line ?? 1)", "field": "\(error.field ?? "")",
                "eventType": "\(error.eventType ?? "")",
            ]
        )
        var members: [String: JSONValue] = [
            "error": .string(error.description), "code": .string(error.code.description),
            "line": .integer(Int64(error.line ?? 1)),
        ]
        if let field = error.field { members["field"] = .string(field) }
        if let type = error.eventType { members["eventType"] = .string(type) }
        return Self.json(.badRequest, .object(members))
    }

    /// A 409 naming the event and the seq that holds its idempotency key; logged without the key.
    func conflict(_ error: IdempotencyConflict) -> Response {
        logger.notice(
            "events refused: idempotency key of another event",
            metadata: ["code": "\(error.code)", "event": "\(error.index + 1)", "heldBySeq": "\(error.seq ?? 0)"]
        )
        var members: [String: JSONValue] = [
            "error": .string(error.description), "code": .string(error.code.description),
            "event": .integer(Int64(error.index + 1)),
        ]
        if let seq = error.seq { members["seq"] = .integer(Int64(clamping: seq)) }
        return Self.json(.conflict, .object(members))
    }

    func status() -> Response {
        do {
            return Self.json(.ok, try DeliveryStatus.read(log.storage, policy: policy).json)
        } catch {
            logger.error("reading the delivery status failed", metadata: ["error": "\(error)"])
            return Self.error(.serviceUnavailable, "the delivery status cannot be read now")
        }
    }

    static func methodNotAllowed(_ allowed: String) -> Response {
        var response = error(.methodNotAllowed, "method not allowed; use \(allowed)")
        response.headers[.allow] = allowed
        return response
    }

    /// The ingest API's error: `{"error", "code": "http<status>"}` (docs/OPERATIONS.md, the agent's ingest API).
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        JSONAnswer.error(status, message, ["code": .string("http\(status.code)")])
    }

    static func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        JSONAnswer.json(status, value)
    }
}
