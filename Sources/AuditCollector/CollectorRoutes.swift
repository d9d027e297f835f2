import AuditChain
import AuditServerKit
import AuditWire
import Crypto
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TransparencyLog

/// The request handlers of ``CollectorServer``: authentication, size limits, decoding and JSON responses.
struct CollectorRoutes: Sendable {
    let collector: Collector
    let token: String?
    let readAccess: ReadAccess
    let logger: Logger
    /// Counts ingest answers, entries and durations.
    let metrics: CollectorMetrics
    /// The pages under `/ui/`: their renderer and sign-in sessions.
    var ui = CollectorUIState(secureCookies: false)

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    func register(on router: Router<BasicRequestContext>) {
        router.post(RouterPath(SyncWire.eventsPath)) { request, _ in await postEvents(request) }
        router.get("/v1/logs/:logId/head") { request, context in
            await getHead(request, logHex: context.parameters.get("logId") ?? "")
        }
        router.get("/v1/collector/key") { request, _ in getKey(request) }
        router.get("/v1/logs/:logId/checkpoint") { request, context in
            await getCheckpoint(request, logHex: context.parameters.get("logId") ?? "")
        }
        registerReadAPI(on: router)
        registerUI(on: router)
    }

    /// `POST /v1/audit/events`, counted by answer.
    func postEvents(_ request: Request) async -> Response {
        let response = await receiveEvents(request)
        metrics.countRequest(code: Int(response.status.code))
        return response
    }

    func receiveEvents(_ request: Request) async -> Response {
        if let denied = authenticate(request) { return denied }
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix("application/json") {
            return Self.error(.unsupportedMediaType, "Content-Type must be application/json")
        }
        let body: [UInt8]
        do throws(BoundedBody.Refusal) {
            body = try await BoundedBody.read(request, maxBytes: SyncWire.maxRequestBytes)
        } catch {
            return Self.error(error.status, error.message)
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: body)
        } catch {
            return Self.error(.badRequest, "the body is not valid JSON: \(error)")
        }
        if case .array(let items)? = json.objectValue?["entries"], items.count > SyncWire.maxBatchEntries {
            return Self.error(
                .contentTooLarge,
                "member \"entries\" has \(items.count) entries, at most \(SyncWire.maxBatchEntries)"
            )
        }
        let batch: SyncBatch
        do {
            batch = try SyncBatch(json: json)
        } catch {
            return Self.error(.badRequest, error.description)
        }
        if let key = request.headers[Self.idempotencyKey], key != batch.batchId {
            return Self.error(.badRequest, "the Idempotency-Key header differs from member \"batchId\"")
        }
        metrics.received(entries: batch.entries.count)
        let started = ContinuousClock.now
        do {
            let (response, checkpoint, incidentsNotKept, verifyDuration) = try await collector.ingestReporting(batch)
            recordIngest(batch, response, duration: .now - started, verifyDuration: verifyDuration)
            await refreshEpoch(batch, response)
            if incidentsNotKept > 0 {
                logger.warning(
                    "incidents not kept as evidence: the log holds the most the collector keeps",
                    metadata: [
                        "logId": "\(Hex.encode(batch.logId))", "notKept": "\(incidentsNotKept)",
                        "maxIncidentsPerLog": "\(collector.store.maxIncidentsPerLog)",
                    ]
                )
            }
            switch checkpoint {
            case .refused(let reason):
                logger.warning(
                    "device checkpoint not kept",
                    metadata: ["logId": "\(Hex.encode(batch.logId))", "reason": "\(reason)"]
                )
            case .conflict:
                logger.error(
                    "device checkpoint contradicts a held entry: the device signed two histories",
                    metadata: ["logId": "\(Hex.encode(batch.logId))", "seq": "\(batch.checkpoint?.seq ?? 0)"]
                )
            case .accepted, nil:
                break
            }
            return Self.json(.ok, response.json)
        } catch {
            metrics.ingestFailed(duration: .now - started)
            logger.error("storing a batch failed", metadata: ["error": "\(error)"])
            var response = Self.error(.serviceUnavailable, "the collector cannot store the batch now; retry later")
            response.headers[.retryAfter] = "5"
            return response
        }
    }

    func getHead(_ request: Request, logHex: String) async -> Response {
        if let denied = authorizeRead(request) { return denied }
        guard let logId = Hex.decode(logHex), logId.count == FormatConstants.logIdSize else {
            return Self.error(.badRequest, "the log id must be 32 hex digits")
        }
        do {
            guard let status = try await collector.status(logId: logId) else {
                return Self.error(.notFound, "the collector holds nothing of log \(Hex.encode(logId))")
            }
            return Self.json(.ok, status.json)
        } catch {
            logger.error("reading a log's head failed", metadata: ["error": "\(error)"])
            return Self.error(.internalServerError, "cannot read the head")
        }
    }

    /// The log's tree head as a signed C2SP checkpoint note (docs/TRANSPARENCY.md section 6), `text/plain`.
    func getCheckpoint(_ request: Request, logHex: String) async -> Response {
        if let denied = authorizeRead(request) { return denied }
        guard let logId = Hex.decode(logHex), logId.count == FormatConstants.logIdSize else {
            return Self.readError(.badRequest, "the log id must be 32 hex digits")
        }
        do {
            guard let note = try await collector.signedCheckpoint(logId: logId) else {
                return Self.readError(.notFound, "the collector's tree of log \(Hex.encode(logId)) is empty")
            }
            var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: note.bytes)))
            response.headers[.contentType] = "text/plain; charset=utf-8"
            response.headers[.cacheControl] = "no-store"
            return response
        } catch {
            logger.error("signing a log's checkpoint failed", metadata: ["error": "\(error)"])
            return Self.readError(.internalServerError, "cannot sign the checkpoint")
        }
    }

    func getKey(_ request: Request) -> Response {
        if let denied = authorizeRead(request) { return denied }
        let key = collector.receiptKey
        return Self.json(
            .ok,
            .object([
                "v": .integer(SyncWire.version),
                "keyId": .string(key.id.hex),
                "publicKey": .string(Hex.encode(key.publicKey.rawRepresentation)),
            ])
        )
    }

    /// nil when the request carries the ingest token (or none is set); a 401 otherwise. The comparison takes the
    /// same time for every token.
    func authenticate(_ request: Request) -> Response? {
        guard let token else { return nil }
        if let presented = Self.bearer(request), Self.constantTimeEqual(presented, token) { return nil }
        return Self.unauthorized()
    }

    /// nil when the request may use the read API (``ReadAccess``); a 401 otherwise.
    func authorizeRead(_ request: Request) -> Response? {
        switch readAccess {
        case .everyone:
            return nil
        case .ingestToken:
            return authenticate(request)
        case .token:
            guard let presented = Self.bearer(request) else { return Self.unauthorized() }
            return opensReads(presented) ? nil : Self.unauthorized()
        }
    }

    /// Whether reads are open to everyone (`--public-read`, or no token at all).
    var readsAreOpen: Bool {
        switch readAccess {
        case .everyone: true
        case .ingestToken: token == nil
        case .token: false
        }
    }

    /// Whether `presented` opens the read API: the read token or the ingest token (``ReadAccess``). Both comparisons
    /// run, whichever matches.
    func opensReads(_ presented: String) -> Bool {
        switch readAccess {
        case .everyone:
            return true
        case .ingestToken:
            return token.map { Self.constantTimeEqual(presented, $0) } ?? true
        case .token(let readToken):
            let isRead = Self.constantTimeEqual(presented, readToken)
            let isIngest = token.map { Self.constantTimeEqual(presented, $0) } ?? false
            return isRead || isIngest
        }
    }

    /// The token of an `Authorization: Bearer <token>` header.
    static func bearer(_ request: Request) -> String? {
        request.headers[.authorization].flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
        }
    }

    static func unauthorized() -> Response {
        var response = Self.error(.unauthorized, "a valid bearer token is required")
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    /// Compares the SHA-256 digests of the two strings without an early exit.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(SHA256.hash(data: Array(lhs.utf8)))
        let right = Array(SHA256.hash(data: Array(rhs.utf8)))
        var difference: UInt8 = 0
        for index in 0..<left.count { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    static func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        JSONAnswer.json(status, value)
    }

    /// The collector's error body, `{"error": "..."}` (docs/PROTOCOL.md section 2).
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        JSONAnswer.error(status, message)
    }
}
