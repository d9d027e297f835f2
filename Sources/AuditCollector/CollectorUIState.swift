import CollectorUI
import Foundation
import Hummingbird
import HummingbirdAuth

/// What the pages under `/ui/` share for the life of a listener: the page renderer and the sign-in sessions
/// (hummingbird-auth's ``SessionStorage`` over an in-memory store: a session lives in this process only).
struct CollectorUIState: Sendable {
    /// A signed-in reader: when the session began.
    struct Session: Codable, Sendable {
        var signedInAt: Int64
    }

    let renderer: PageRenderer
    let sessions: SessionStorage<Session>
    let sessionLifetime: Duration
    /// Whether the session cookie carries `Secure` (the collector serves TLS).
    let secureCookies: Bool

    /// The session cookie's name.
    static let cookieName = "auditd_ui_session"
    /// How long a session lasts unless configured otherwise.
    static let defaultSessionLifetime = Duration.seconds(12 * 3600)

    /// The session cookie emptied and expired, which makes a browser drop it (sign-out).
    var expiredCookie: Cookie {
        Cookie(
            name: Self.cookieName,
            value: "",
            expires: Date(timeIntervalSince1970: 0),
            maxAge: 0,
            path: UIPaths.root,
            secure: secureCookies,
            httpOnly: true,
            sameSite: .strict
        )
    }

    init(secureCookies: Bool, sessionLifetime: Duration = Self.defaultSessionLifetime) {
        do {
            renderer = try PageRenderer()
        } catch {
            preconditionFailure("the collector's page templates do not parse: \(error)")
        }
        let cookie = SessionCookieParameters(
            name: Self.cookieName,
            path: UIPaths.root,
            secure: secureCookies,
            sameSite: .strict
        )
        sessions = SessionStorage(
            MemoryPersistDriver(ContinuousClock()),
            configuration: SessionStorageConfiguration(sessionCookieParameters: cookie, keyPrefix: "ui.")
        )
        self.sessionLifetime = sessionLifetime
        self.secureCookies = secureCookies
    }
}
