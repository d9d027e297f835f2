import AuditChain
import Foundation
import Hummingbird
import HummingbirdAuth
import Testing
import TestKit

@testable import AuditCollector

/// Access to the pages (docs/COLLECTOR-UI.md): a sign-in form that takes the read token and sets a session cookie
/// (HttpOnly, SameSite=Strict, Secure over TLS, an expiry), sign-out, bearer tokens for scripts, and open pages with
/// `--public-read`.
@Suite struct CollectorUISignInTests {
    static let form = ["Content-Type": "application/x-www-form-urlencoded"]

    /// The `name=value` part of a Set-Cookie header.
    static func cookie(_ setCookie: String?) -> String? {
        setCookie?.split(separator: ";").first.map(String.init)
    }

    @Test func withoutASessionABrowserIsSentToSignInAndAScriptIsRefused() async throws {
        try await CollectorUIServer.run(readToken: "reader") { client, _, _ in
            let page = try await client.get("/ui/fleet")
            #expect(page.status == 303)
            #expect(page.headers["location"] == "/ui/sign-in")
            let twin = try await client.get("/ui/fleet.json")
            #expect(twin.status == 401)
            #expect(twin.headers["www-authenticate"] == "Bearer")
            let evidence = try await client.get("/ui/logs/\(String(repeating: "ab", count: 16))/evidence.bundle?seq=1")
            #expect(evidence.status == 303)
            let signIn = try await client.get("/ui/sign-in")
            #expect(signIn.status == 200)
            #expect(signIn.text.contains("<form method=\"post\" action=\"/ui/sign-in\""))
            #expect(signIn.headers["content-security-policy"] == "default-src 'self'")
            // Bearer tokens still work for scripts: the read token and the ingest token.
            for token in ["reader", CollectorUIServer.ingestToken] {
                let reply = try await client.get("/ui/fleet.json", headers: ["Authorization": "Bearer \(token)"])
                #expect(reply.status == 200)
            }
            #expect(try await client.get("/ui/fleet", headers: ["Authorization": "Bearer nope"]).status == 303)
        }
    }

    @Test func aWrongTokenIsRefusedAndTheRightOneOpensASession() async throws {
        try await CollectorUIServer.run(readToken: "reader") { client, _, _ in
            for wrong in ["token=nope", "token=", "other=reader", "token=%3Cscript%3E"] {
                let refused = try await client.send("POST", "/ui/sign-in", body: Array(wrong.utf8), headers: Self.form)
                #expect(refused.status == 401, "\(wrong)")
                #expect(refused.headers["set-cookie"] == nil)
                #expect(refused.text.contains("id=\"sign-in-error\""))
                #expect(!refused.text.contains("<script>"))
            }
            let accepted = try await client.send(
                "POST",
                "/ui/sign-in",
                body: Array("token=reader".utf8),
                headers: Self.form
            )
            #expect(accepted.status == 303)
            #expect(accepted.headers["location"] == "/ui/fleet")
            let setCookie = try #require(accepted.headers["set-cookie"])
            #expect(setCookie.hasPrefix(CollectorUIState.cookieName + "="))
            #expect(setCookie.contains("HttpOnly"))
            #expect(setCookie.contains("SameSite=Strict"))
            #expect(setCookie.contains("Path=/ui"))
            #expect(setCookie.contains("Expires="))
            // Plain HTTP: no Secure attribute (a browser would drop the cookie).
            #expect(!setCookie.contains("Secure"))
            let cookie = try #require(Self.cookie(setCookie))
            let page = try await client.get("/ui/fleet", headers: ["Cookie": cookie])
            #expect(page.status == 200)
            #expect(page.text.contains("Sign out"))
            #expect(try await client.get("/ui/witnesses.json", headers: ["Cookie": cookie]).status == 200)
            // The cookie opens the pages, not the read API.
            let head = try await client.get("/v1/collector/key", headers: ["Cookie": cookie])
            #expect(head.status == 401)
        }
    }

    @Test func signingOutEndsTheSession() async throws {
        try await CollectorUIServer.run(readToken: "reader") { client, _, _ in
            let accepted = try await client.send(
                "POST",
                "/ui/sign-in",
                body: Array("token=reader".utf8),
                headers: Self.form
            )
            let cookie = try #require(Self.cookie(accepted.headers["set-cookie"]))
            let out = try await client.send(
                "POST",
                "/ui/sign-out",
                headers: ["Cookie": cookie].merging(Self.form) { $1 }
            )
            #expect(out.status == 303)
            #expect(out.headers["location"] == "/ui/sign-in")
            let expired = try #require(out.headers["set-cookie"])
            #expect(expired.hasPrefix(CollectorUIState.cookieName + "=;"))
            #expect(expired.contains("Max-Age=0"))
            #expect(expired.contains("1970"))
            let after = try await client.get("/ui/fleet", headers: ["Cookie": cookie])
            #expect(after.status == 303)
            #expect(
                try await client.get("/ui/fleet", headers: ["Cookie": CollectorUIState.cookieName + "=forged"]).status
                    == 303
            )
        }
    }

    @Test func publicPagesNeedNoSignIn() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, _ in
            let signIn = try await client.get("/ui/sign-in")
            #expect(signIn.status == 303)
            #expect(signIn.headers["location"] == "/ui/fleet")
            let page = try await client.get("/ui/fleet")
            #expect(page.status == 200)
            #expect(!page.text.contains("Sign out"))
        }
    }

    @Test func overTLSTheCookieIsSecureAndExpires() async throws {
        let state = CollectorUIState(secureCookies: true, sessionLifetime: .seconds(60))
        let cookie = try await state.sessions.save(session: .init(signedInAt: 0), expiresIn: state.sessionLifetime)
        #expect(cookie.secure)
        #expect(cookie.httpOnly)
        #expect(cookie.sameSite == .strict)
        #expect(cookie.path == "/ui")
        #expect(cookie.expires != nil)
    }
}
