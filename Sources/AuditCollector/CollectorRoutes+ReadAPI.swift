import AuditChain
import AuditServerKit
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TransparencyLog

/// The read API's handlers (docs/COLLECTOR-API.md section 2): tlog-tiles tiles and entry bundles, and proofs by seq.
extension CollectorRoutes {
    /// How long a tile or an entry bundle may be cached: its bytes never change (c2sp.org/tlog-tiles: "This
    /// endpoint is immutable, so its caching headers SHOULD be long-lived").
    static let immutableMaxAge = 31_536_000

    func registerReadAPI(on router: Router<BasicRequestContext>) {
        // A tile path has one to nine elements after tile/; it is parsed here, strictly, from the raw path.
        router.get("/v1/logs/:logId/tile/**") { request, _ in await getTile(request) }
        router.get("/v1/logs/:logId/tile") { request, _ in await getTile(request) }
        router.get("/v1/logs/:logId/proof") { request, context in
            await getInclusionProof(request, logHex: context.parameters.get("logId") ?? "")
        }
        router.get("/v1/logs/:logId/proof/consistency") { request, context in
            await getConsistencyProof(request, logHex: context.parameters.get("logId") ?? "")
        }
    }

    /// `GET /v1/logs/{logId}/tile/<L>/<N>[.p/<W>]` and `…/tile/entries/<N>[.p/<W>]`.
    func getTile(_ request: Request) async -> Response {
        if let denied = authorizeRead(request) { return denied }
        // The raw path, empty elements and all: /v1/logs/<log id>/tile/...
        let prefix = "/v1/logs/"
        let raw = request.uri.path
        guard raw.hasPrefix(prefix), let slash = raw.dropFirst(prefix.count).firstIndex(of: "/") else {
            return Self.readError(.badRequest, "a tile path is /v1/logs/<log id>/tile/...")
        }
        guard let logId = Self.logId(raw[raw.index(raw.startIndex, offsetBy: prefix.count)..<slash]) else {
            return Self.readError(.badRequest, "the log id must be 32 hex digits")
        }
        let path: TilePath
        do {
            path = try TilePath(parsing: raw[raw.index(after: slash)...])
        } catch {
            return Self.readError(.badRequest, error.description)
        }
        do {
            let bytes: [UInt8]
            switch path.kind {
            case .hashes: bytes = try await collector.store.tile(logId: logId, path)
            case .entries: bytes = try await collector.entryBundle(logId: logId, path)
            }
            var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            response.headers[.contentType] = "application/octet-stream"
            response.headers[.cacheControl] = "\(cacheVisibility), max-age=\(Self.immutableMaxAge), immutable"
            return response
        } catch {
            return failure(error, reading: "a tile")
        }
    }

    /// `GET /v1/logs/{logId}/proof?seq=N`.
    func getInclusionProof(_ request: Request, logHex: String) async -> Response {
        if let denied = authorizeRead(request) { return denied }
        guard let logId = Self.logId(logHex[...]) else {
            return Self.readError(.badRequest, "the log id must be 32 hex digits")
        }
        let seq: UInt64
        switch Self.number(request, "seq") {
        case .success(let value?): seq = value
        case .success(nil): return Self.readError(.badRequest, "query parameter \"seq\" is required")
        case .failure(let problem): return Self.readError(.badRequest, problem.message)
        }
        do {
            return Self.noStore(Self.json(.ok, try await collector.inclusionAnswer(logId: logId, seq: seq)))
        } catch {
            return failure(error, reading: "an inclusion proof")
        }
    }

    /// `GET /v1/logs/{logId}/proof/consistency?from=M[&to=N]`.
    func getConsistencyProof(_ request: Request, logHex: String) async -> Response {
        if let denied = authorizeRead(request) { return denied }
        guard let logId = Self.logId(logHex[...]) else {
            return Self.readError(.badRequest, "the log id must be 32 hex digits")
        }
        let first: UInt64
        let second: UInt64?
        switch (Self.number(request, "from"), Self.number(request, "to")) {
        case (.failure(let problem), _), (_, .failure(let problem)):
            return Self.readError(.badRequest, problem.message)
        case (.success(nil), _):
            return Self.readError(.badRequest, "query parameter \"from\" is required")
        case (.success(let from?), .success(let to)):
            first = from
            second = to
        }
        guard first > 0 else {
            return Self.readError(.badRequest, "\"from\" must be at least 1: nothing is proved against the empty tree")
        }
        if let second, first > second {
            return Self.readError(.badRequest, "\"from\" (\(first)) must not be above \"to\" (\(second))")
        }
        do {
            let answer = try await collector.consistencyAnswer(logId: logId, from: first, to: second)
            return Self.noStore(Self.json(.ok, answer))
        } catch {
            return failure(error, reading: "a consistency proof")
        }
    }

    /// `public` when anyone may read, else `private`: a shared cache must not hand what a token opened to others.
    var cacheVisibility: String {
        switch readAccess {
        case .everyone: "public"
        case .ingestToken: token == nil ? "public" : "private"
        case .token: "private"
        }
    }

    /// The response to a failed read: 404, 400 or 501 for ``TreeReadError``, 500 (logged) otherwise.
    func failure(_ error: any Error, reading what: String) -> Response {
        guard let error = error as? TreeReadError else {
            logger.error("reading \(what) failed", metadata: ["error": "\(error)"])
            return Self.readError(.internalServerError, "cannot read \(what)")
        }
        let status: HTTPResponse.Status =
            switch error.code {
            case .invalidRange: .badRequest
            case .entryTooLarge: .notImplemented
            default: .notFound
            }
        return Self.noStore(
            JSONAnswer.error(status, error.message, ["reason": .string(error.code.description)])
        )
    }

    /// A JSON error no cache keeps: what is missing now may exist later.
    static func readError(_ status: HTTPResponse.Status, _ message: String) -> Response {
        noStore(error(status, message))
    }

    static func noStore(_ response: Response) -> Response {
        var response = response
        response.headers[.cacheControl] = "no-store"
        return response
    }

    static func logId(_ text: Substring) -> [UInt8]? {
        guard let bytes = Hex.decode(String(text)), bytes.count == FormatConstants.logIdSize else { return nil }
        return bytes
    }

    /// A query parameter that must appear at most once, as an ASCII decimal with no sign and no leading zero that
    /// fits 64 bits; nil when absent.
    static func number(_ request: Request, _ name: String) -> Result<UInt64?, QueryProblem> {
        let values = request.uri.queryParameters[values: name[...]]
        guard let value = values.first else { return .success(nil) }
        let problem = QueryProblem(
            message:
                "query parameter \"\(name)\" must appear once, as a decimal from 0 to \(UInt64.max) with no sign or "
                + "leading zero"
        )
        guard values.count == 1, let number = decimal(value.utf8) else { return .failure(problem) }
        return .success(number)
    }

    /// An ASCII decimal with no leading zero (unless it is `0`) that fits a `UInt64`; nil otherwise.
    static func decimal(_ text: some Collection<UInt8>) -> UInt64? {
        guard let first = text.first, text.count <= 20, first != UInt8(ascii: "0") || text.count == 1 else {
            return nil
        }
        var value: UInt64 = 0
        for character in text {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(character - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}

/// A query parameter the read API refuses.
struct QueryProblem: Error {
    /// What is wrong with it.
    var message: String
}
