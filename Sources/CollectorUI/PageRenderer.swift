import AuditChain
import Mustache

/// Renders the pages to HTML with the mustache templates of ``Templates``: the engine escapes every value, so a
/// device id, a reason or an origin such as `<script>` is shown as text, never taken as markup.
public struct PageRenderer: Sendable {
    private let library: MustacheLibrary

    /// Parses the templates.
    /// - Throws: the template engine's parse error (a template of this module is malformed: a bug).
    public init() throws {
        var library = MustacheLibrary()
        for (name, template) in Templates.all.sorted(by: { $0.key < $1.key }) {
            try library.register(template, named: name)
        }
        self.library = library
    }

    /// The fleet page; `signedIn` adds the sign-out button.
    public func html(_ page: FleetPage, signedIn: Bool) -> String {
        var view = page.view
        view.nav.signOut = signedIn
        return render(view, "fleet")
    }

    /// The page of one log.
    public func html(_ page: LogPage, signedIn: Bool) -> String {
        var view = page.view
        view.nav.signOut = signedIn
        return render(view, "log")
    }

    /// The proof page.
    public func html(_ page: ProofPage, signedIn: Bool) -> String {
        var view = page.view
        view.nav.signOut = signedIn
        return render(view, "proof")
    }

    /// The witnesses page.
    public func html(_ page: WitnessesPage, signedIn: Bool) -> String {
        var view = page.view
        view.nav.signOut = signedIn
        return render(view, "witnesses")
    }

    /// The sign-in form, with `error` above it when a sign-in failed; `lifetime` says how long a session lasts.
    public func signIn(error: String?, lifetime: Duration) -> String {
        render(SignInView(error: error, lifetime: Self.describe(lifetime)), "signIn")
    }

    /// A page that says what went wrong (an unknown log, a malformed request).
    public func problem(heading: String, message: String, signedIn: Bool) -> String {
        var view = ProblemView(title: heading, heading: heading, message: message)
        view.nav.signOut = signedIn
        return render(view, "problem")
    }

    private func render(_ view: Any, _ template: String) -> String {
        library.render(view, withTemplate: template) ?? ""
    }

    /// `12 hours`, `30 minutes`, `45 seconds`.
    static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        if seconds >= 3600, seconds % 3600 == 0 { return "\(seconds / 3600) hours" }
        if seconds >= 60, seconds % 60 == 0 { return "\(seconds / 60) minutes" }
        return "\(seconds) seconds"
    }

    struct SignInView: Sendable {
        var title = "Sign in"
        var nav = Nav(current: nil)
        var refresh = false
        var error: String?
        var lifetime: String
    }

    struct ProblemView: Sendable {
        var title: String
        var nav = Nav(current: nil)
        var refresh = false
        var heading: String
        var message: String
    }
}
