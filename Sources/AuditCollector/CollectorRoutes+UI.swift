import AuditChain
import AuditServerKit
import CollectorUI
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore

/// The pages under `/ui/` (docs/COLLECTOR-UI.md): access (open with `--public-read`, else the read token as a
/// bearer header or through the sign-in form and its session cookie), the security headers every answer carries,
/// and the choice between a page and its JSON twin. The pages are read-only: the only state a request changes is
/// its own session.
extension CollectorRoutes {
    /// How a request reached the pages.
    enum UIReader {
        /// The pages are public.
        case everyone
        /// A read token in an `Authorization: Bearer` header.
        case bearer
        /// A session cookie from the sign-in form.
        case session
    }

    /// The most bytes a sign-in form may have.
    static let maxSignInBytes = 4096

    func registerUI(on router: Router<BasicRequestContext>) {
        router.get(RouterPath(UIPaths.root)) { _, _ in Self.seeOther(UIPaths.fleet) }
        router.get(RouterPath(UIPaths.style)) { _, _ in Self.asset(UIAssets.styleSheet, type: "text/css; charset=utf-8")
        }
        router.get(RouterPath(UIPaths.script)) { _, _ in
            Self.asset(UIAssets.script, type: "text/javascript; charset=utf-8")
        }
        router.get(RouterPath(UIPaths.signIn)) { _, _ in
            readsAreOpen
                ? Self.seeOther(UIPaths.fleet)
                : Self.page(.ok, ui.renderer.signIn(error: nil, lifetime: ui.sessionLifetime))
        }
        router.post(RouterPath(UIPaths.signIn)) { request, _ in await signIn(request) }
        router.post(RouterPath(UIPaths.signOut)) { request, _ in await signOut(request) }
        for path in [UIPaths.fleet, UIPaths.json(UIPaths.fleet)] {
            router.get(RouterPath(path)) { request, _ in await guarded(request) { try await fleetPage(request, $0) } }
        }
        for path in [UIPaths.witnesses, UIPaths.json(UIPaths.witnesses)] {
            router.get(RouterPath(path)) { request, _ in
                await guarded(request) { try await witnessesPage(request, $0) }
            }
        }
        for path in [UIPaths.proof, UIPaths.json(UIPaths.proof)] {
            router.get(RouterPath(path)) { request, _ in await guarded(request) { try await proofPage(request, $0) } }
        }
        router.get("/ui/logs/:logId") { request, context in
            let hex = context.parameters.get("logId") ?? ""
            return await guarded(request) { try await logPage(request, $0, hex: hex) }
        }
        router.get("/ui/logs/:logId/proof.tlog-proof") { request, context in
            let hex = context.parameters.get("logId") ?? ""
            return await guarded(request) { _ in try await proofFile(request, hex: hex) }
        }
        router.get("/ui/logs/:logId/evidence.bundle") { request, context in
            let hex = context.parameters.get("logId") ?? ""
            return await guarded(request) { _ in try await evidenceFile(request, hex: hex) }
        }
    }

    /// Who is reading, or nil when the request may not read the pages.
    func uiReader(_ request: Request) async -> UIReader? {
        if readsAreOpen { return .everyone }
        if let presented = Self.bearer(request), opensReads(presented) { return .bearer }
        if (try? await ui.sessions.load(request: request)) != nil { return .session }
        return nil
    }

    /// Runs `body` for a reader allowed in; otherwise sends a browser to the sign-in form (303) and a script a 401.
    /// A failure of `body` is logged and answered 500, in the form the request asked for.
    func guarded(_ request: Request, _ body: (UIReader) async throws -> Response) async -> Response {
        guard let reader = await uiReader(request) else {
            return Self.wantsJSON(request) ? Self.secured(Self.unauthorized()) : Self.seeOther(UIPaths.signIn)
        }
        do {
            return Self.secured(try await body(reader))
        } catch {
            logger.error("rendering a page failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return problem(request, reader, .internalServerError, "The page cannot be read now", "\(error)")
        }
    }

    /// `POST /ui/sign-in`: a form with the read token; right, a session cookie and a redirect to the fleet; wrong,
    /// the form again with a 401.
    func signIn(_ request: Request) async -> Response {
        if readsAreOpen { return Self.seeOther(UIPaths.fleet) }
        struct Form: Decodable { var token: String }
        let presented: String?
        do throws(BoundedBody.Refusal) {
            let body = try await BoundedBody.read(request, maxBytes: Self.maxSignInBytes)
            presented = try? URLEncodedFormDecoder().decode(Form.self, from: String(decoding: body, as: UTF8.self))
                .token
        } catch {
            return Self.page(error.status, ui.renderer.signIn(error: error.message, lifetime: ui.sessionLifetime))
        }
        guard let presented, opensReads(presented) else {
            logger.notice("a sign-in to the pages was refused: wrong token")
            let form = ui.renderer.signIn(
                error: "That token does not open this collector.",
                lifetime: ui.sessionLifetime
            )
            return Self.page(.unauthorized, form)
        }
        do {
            let session = CollectorUIState.Session(signedInAt: AuditTimestamp.now().millisecondsSinceEpoch)
            let cookie = try await ui.sessions.save(session: session, expiresIn: ui.sessionLifetime)
            var response = Self.seeOther(UIPaths.fleet)
            response.setCookie(cookie)
            return response
        } catch {
            logger.error("a session cannot be stored", metadata: ["error": "\(error)"])
            return Self.page(
                .internalServerError,
                ui.renderer.signIn(error: "Cannot sign in now.", lifetime: ui.sessionLifetime)
            )
        }
    }

    /// `POST /ui/sign-out`: forgets the session and expires its cookie. The cookie sent back is emptied, with
    /// `Max-Age=0` and an expiry in 1970: the one hummingbird-auth makes expires "now", to the second, which a
    /// browser may still keep for that second.
    func signOut(_ request: Request) async -> Response {
        var response = Self.seeOther(readsAreOpen ? UIPaths.fleet : UIPaths.signIn)
        _ = try? await ui.sessions.delete(request: request)
        response.setCookie(ui.expiredCookie)
        return response
    }

    /// A page that says what went wrong, or its JSON twin `{"error": ...}`.
    func problem(
        _ request: Request,
        _ reader: UIReader,
        _ status: HTTPResponse.Status,
        _ heading: String,
        _ message: String
    ) -> Response {
        if Self.wantsJSON(request) { return Self.secured(Self.readError(status, message)) }
        return Self.page(status, ui.renderer.problem(heading: heading, message: message, signedIn: reader == .session))
    }

    /// A page, or its JSON twin when the request asked for JSON.
    func answer(
        _ request: Request,
        _ reader: UIReader,
        json: @autoclosure () -> JSONValue,
        html: (Bool) -> String
    )
        -> Response
    {
        if Self.wantsJSON(request) { return Self.secured(Self.noStore(Self.json(.ok, json()))) }
        return Self.page(.ok, html(reader == .session))
    }

    /// Whether the request asks for a page's JSON twin: its path ends in `.json`, or it accepts `application/json`.
    static func wantsJSON(_ request: Request) -> Bool {
        request.uri.path.hasSuffix(".json") || (request.headers[.accept]?.contains("application/json") ?? false)
    }

    /// The query parameters as name and value pairs, in order.
    static func parameters(_ request: Request) -> [(name: String, value: String)] {
        request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
    }

    /// An HTML page with the security headers.
    static func page(_ status: HTTPResponse.Status, _ html: String) -> Response {
        var response = Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        response.headers[.contentType] = "text/html; charset=utf-8"
        response.headers[.cacheControl] = "no-store"
        return secured(response)
    }

    /// A file of the pages' own (style sheet, script).
    static func asset(_ text: String, type: String) -> Response {
        var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        response.headers[.contentType] = type
        response.headers[.cacheControl] = "public, max-age=3600"
        return secured(response)
    }

    /// A download: `bytes` as `name`.
    static func download(_ bytes: [UInt8], name: String, type: String) -> Response {
        var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        response.headers[.contentType] = type
        response.headers[.contentDisposition] = "attachment; filename=\"\(name)\""
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// 303 See Other to `location`, which is always one of the pages' own paths.
    static func seeOther(_ location: String) -> Response {
        var response = Response(status: .seeOther)
        response.headers[.location] = location
        response.headers[.cacheControl] = "no-store"
        return secured(response)
    }

    /// `response` with the headers every answer under `/ui/` carries: `Content-Security-Policy: default-src 'self'`
    /// (no inline script or style, nothing from elsewhere), no sniffing, no framing, no referrer.
    static func secured(_ response: Response) -> Response {
        var response = response
        response.headers[.contentSecurityPolicy] = "default-src 'self'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        return response
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
