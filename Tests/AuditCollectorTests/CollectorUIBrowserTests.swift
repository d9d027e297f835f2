import AuditChain
import Foundation
import Testing
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// The pages in a real browser (docs/COLLECTOR-UI.md): Debian's chromium, headless, loads every page of a collector
/// that holds a log bridged by a removal record (with a hostile device id and reason), a log with an unbridged gap,
/// a log with a fork, and a witness; with JavaScript and without; the rendered DOM (`--dump-dom`) is checked and a
/// screenshot 400 px wide of each page is saved under test-artifacts/collector-ui/. scripts/test installs chromium;
/// the test is skipped only when that install failed (AUDIT_CHROMIUM_UNAVAILABLE says why), and fails when chromium
/// is simply missing.
@Suite struct CollectorUIBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let unavailable = ProcessInfo.processInfo.environment["AUDIT_CHROMIUM_UNAVAILABLE"]
    static let skipReason = Comment(
        rawValue:
            "skipped: chromium cannot be installed on this machine (\(unavailable ?? "")); scripts/test installs it"
    )
    static var runs: Bool { chromium != nil || unavailable == nil }

    /// Where the screenshots go: test-artifacts/collector-ui/ at the package's root (git ignores it).
    static let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("test-artifacts/collector-ui").path

    /// A page, and what its rendered DOM must contain and must not.
    struct Page {
        var name: String
        var path: String
        var contains: [String]
        var excludes: [String] = ["<script>alert", "<img"]
        /// Whether the page loads the refresh script.
        var refreshes = true
    }

    static func pages(_ fixture: UIFleetFixture) -> [Page] {
        let bridged = Hex.encode(fixture.bridged.logId)
        return [
            Page(
                name: "fleet",
                path: "/ui/fleet",
                contains: [
                    "<table id=\"fleet\">", "<caption>Device logs", "&lt;script&gt;alert('device')&lt;/script&gt;",
                    ">incident<", ">behind<", ">healthy<", "aria-sort=\"ascending\"",
                ]
            ),
            Page(name: "fleet-behind", path: "/ui/fleet?state=behind", contains: ["gapped-device", "1 of 3 logs"]),
            Page(
                name: "log-bridged",
                path: "/ui/logs/\(bridged)",
                contains: [
                    "<pre id=\"checkpoint\">", "<table id=\"entries\">", "&lt;img src=x onerror=alert(1)&gt;",
                    "accountedRemoval",
                ]
            ),
            Page(
                name: "log-gapped",
                path: "/ui/logs/\(Hex.encode(fixture.gapped.logId))",
                contains: ["Unbridged gaps", "3–4", ">behind<"]
            ),
            Page(
                name: "log-forked",
                path: "/ui/logs/\(Hex.encode(fixture.forked.logId))",
                contains: ["<table id=\"incidents\">", ">fork<", "evidence.bundle?seq=2&amp;kind=fork"]
            ),
            Page(
                name: "proof",
                path: "/ui/proof?log=\(bridged)&seq=5&from=1&to=4",
                contains: [
                    "Entry 5 is leaf 3 of a tree of 4", "Download the .tlog-proof file", "Tree size 1 is a prefix",
                ],
                refreshes: false
            ),
            Page(name: "witnesses", path: "/ui/witnesses", contains: ["<table id=\"witnesses\">", "witness.test/w1"]),
        ]
    }

    @Test(.enabled(if: runs, skipReason))
    func everyPageRendersInChromiumWithAndWithoutJavaScript() async throws {
        let chromium = try #require(
            Self.chromium,
            "chromium is not installed: run scripts/test (it installs Debian's chromium) or apt-get install chromium"
        )
        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        let profile = try TemporaryDirectory(prefix: "chromium")
        try await CollectorUIServer.run(publicRead: true, witness: true) { client, _, fixture in
            guard case .tcp(let port) = client.target else { return }
            for page in Self.pages(fixture) {
                let url = "http://127.0.0.1:\(port)\(page.path)"
                for javascript in [true, false] {
                    let dom = try await Self.chromium(
                        chromium,
                        profile.path,
                        ["--dump-dom", url],
                        javascript: javascript
                    )
                    for expected in page.contains {
                        #expect(dom.contains(expected), "\(page.name), JavaScript \(javascript): \(expected)")
                    }
                    for excluded in page.excludes {
                        #expect(!dom.contains(excluded), "\(page.name), JavaScript \(javascript): \(excluded)")
                    }
                    // The refresh script marks the root element when it runs: proof that JavaScript ran, or did not.
                    if page.refreshes {
                        #expect(dom.contains("data-refresh=") == javascript, "\(page.name), JavaScript \(javascript)")
                    }
                }
                let shot = Self.artifacts + "/\(page.name).png"
                try? FileManager.default.removeItem(atPath: shot)
                _ = try await Self.chromium(
                    chromium,
                    profile.path,
                    ["--screenshot=\(shot)", "--window-size=400,1200", "--hide-scrollbars", url],
                    javascript: true
                )
                let size = (try? FileManager.default.attributesOfItem(atPath: shot)[.size] as? Int) ?? 0
                #expect(size > 0, "no screenshot of \(page.name)")
            }
        }
    }

    @Test(.enabled(if: runs, skipReason))
    func behindTheReadTokenABrowserIsSentToTheSignInForm() async throws {
        let chromium = try #require(
            Self.chromium,
            "chromium is not installed: run scripts/test (it installs Debian's chromium) or apt-get install chromium"
        )
        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        let profile = try TemporaryDirectory(prefix: "chromium")
        try await CollectorUIServer.run(readToken: "reader") { client, _, _ in
            guard case .tcp(let port) = client.target else { return }
            // The fleet without a session: chromium follows the 303 to the form.
            let url = "http://127.0.0.1:\(port)/ui/fleet"
            for javascript in [true, false] {
                let dom = try await Self.chromium(chromium, profile.path, ["--dump-dom", url], javascript: javascript)
                #expect(dom.contains("<form method=\"post\" action=\"/ui/sign-in\""), "JavaScript \(javascript)")
                #expect(dom.contains("type=\"password\""), "JavaScript \(javascript)")
                #expect(!dom.contains("<table id=\"fleet\">"), "JavaScript \(javascript)")
            }
            let shot = Self.artifacts + "/sign-in.png"
            try? FileManager.default.removeItem(atPath: shot)
            _ = try await Self.chromium(
                chromium,
                profile.path,
                ["--screenshot=\(shot)", "--window-size=400,800", "--hide-scrollbars", url],
                javascript: true
            )
            let size = (try? FileManager.default.attributesOfItem(atPath: shot)[.size] as? Int) ?? 0
            #expect(size > 0, "no screenshot of the sign-in form")
        }
    }

    /// Headless, and nothing but the page's own requests: no background networking, updates, sync or pings.
    static let quietFlags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-pings",
        "--disable-domain-reliability",
    ]

    /// What the sign-in flow saw in the browser.
    struct SignInFlow: Sendable {
        var redirectedToSignIn = false
        var wrongTokenDOM = ""
        var fleetDOM = ""
        var cookie: [String: String] = [:]
        var scriptSeesCookie = true
        var afterSignOutPath = ""
        var cookieAfterSignOut = true
        var fleetAfterSignOutPath = ""
    }

    @Test(.enabled(if: runs, skipReason))
    func theSignInFlowInChromiumWithAWrongAndARightToken() async throws {
        let chromium = try #require(
            Self.chromium,
            "chromium is not installed: run scripts/test (it installs Debian's chromium) or apt-get install chromium"
        )
        let profile = try TemporaryDirectory(prefix: "chromium")
        try await CollectorUIServer.run(readToken: "reader") { client, _, _ in
            guard case .tcp(let port) = client.target else { return }
            let pipe = try ChildProcess.startWithDevToolsPipe(
                chromium,
                Self.quietFlags + [
                    "--user-data-dir=\(profile.path)/pipe", "--remote-debugging-pipe", "about:blank",
                ],
                environment: ["HOME": profile.path, "PATH": "/usr/bin:/bin"],
                outputPath: profile.path + "/pipe.log"
            )
            let base = "http://127.0.0.1:\(port)"
            // Blocking reads: on a thread of their own, never on the pool that serves the collector.
            let flow: SignInFlow = try await withCheckedThrowingContinuation { continuation in
                Thread {
                    continuation.resume(with: Result { try Self.signInFlow(DevToolsSession(pipe: pipe), base: base) })
                }.start()
            }
            _ = await pipe.running.wait(timeout: .seconds(120))
            #expect(flow.redirectedToSignIn)
            #expect(flow.wrongTokenDOM.contains("id=\"sign-in-error\""))
            #expect(!flow.wrongTokenDOM.contains("<table id=\"fleet\">"))
            #expect(flow.fleetDOM.contains("<table id=\"fleet\">"))
            #expect(flow.fleetDOM.contains("Sign out"))
            #expect(flow.cookie["name"] == "auditd_ui_session")
            #expect(flow.cookie["httpOnly"] == "true")
            #expect(flow.cookie["sameSite"] == "Strict")
            #expect(flow.cookie["path"] == "/ui")
            #expect(flow.cookie["session"] == "false", "the cookie has an expiry")
            #expect(!flow.scriptSeesCookie, "HttpOnly: document.cookie does not show it")
            #expect(flow.afterSignOutPath == "/ui/sign-in")
            #expect(!flow.cookieAfterSignOut)
            #expect(flow.fleetAfterSignOutPath == "/ui/sign-in")
        }
    }

    /// The fleet without a session, a wrong token, the right one, the cookie, sign-out, the fleet again.
    static func signInFlow(_ session: DevToolsSession, base: String) throws -> SignInFlow {
        defer { session.close() }
        var flow = SignInFlow()
        let submit = "document.querySelector('form.sign-in').submit()"
        func signIn(_ token: String) throws {
            try session.mark()
            _ = try session.evaluate("document.querySelector('input[name=token]').value = '\(token)'; \(submit)")
        }
        try session.open(base + "/ui/fleet")
        try session.waitFor(path: "/ui/sign-in")
        flow.redirectedToSignIn = true
        try signIn("nope")
        try session.waitFor(path: "/ui/sign-in")
        flow.wrongTokenDOM = try session.dom()
        try signIn("reader")
        try session.waitFor(path: "/ui/fleet")
        flow.fleetDOM = try session.dom()
        if let cookie = try session.cookies().first(where: { $0["name"] as? String == "auditd_ui_session" }) {
            flow.cookie = [
                "name": "\(cookie["name"] ?? "")", "httpOnly": "\(cookie["httpOnly"] as? Bool ?? false)",
                "sameSite": "\(cookie["sameSite"] ?? "")", "path": "\(cookie["path"] ?? "")",
                "session": "\(cookie["session"] as? Bool ?? true)",
            ]
        }
        flow.scriptSeesCookie = (try session.evaluate("document.cookie") as? String ?? "").contains("auditd_ui")
        try session.mark()
        _ = try session.evaluate("document.querySelector('form[action=\"/ui/sign-out\"]').submit()")
        try session.waitFor(path: "/ui/sign-in")
        flow.afterSignOutPath = "/ui/sign-in"
        flow.cookieAfterSignOut = try session.cookies().contains { $0["name"] as? String == "auditd_ui_session" }
        try session.mark()
        _ = try session.evaluate("location.href = '/ui/fleet'")
        try session.waitFor(path: "/ui/sign-in")
        flow.fleetAfterSignOutPath = "/ui/sign-in"
        return flow
    }

    /// Runs headless chromium with `arguments` (loopback only: no background networking) and returns its standard
    /// output.
    static func chromium(
        _ path: String,
        _ profile: String,
        _ arguments: [String],
        javascript: Bool
    ) async throws
        -> String
    {
        var flags = quietFlags
        // Without JavaScript: the profile's content setting blocks the pages' scripts (Blink's scriptEnabled=false
        // would also stop --dump-dom, which runs a script of its own).
        let profileDirectory = profile + (javascript ? "/javascript" : "/no-javascript")
        if !javascript {
            try FileManager.default.createDirectory(
                atPath: profileDirectory + "/Default",
                withIntermediateDirectories: true
            )
            try Data(#"{"profile":{"default_content_setting_values":{"javascript":2}}}"#.utf8)
                .write(to: URL(fileURLWithPath: profileDirectory + "/Default/Preferences"))
        }
        flags.append("--user-data-dir=\(profileDirectory)")
        let output = profile + "/out-\(UUID().uuidString)"
        let running = try ChildProcess.start(
            path,
            flags + arguments,
            environment: ["HOME": profile, "PATH": "/usr/bin:/bin"],
            outputPath: output,
            errorPath: output + ".err"
        )
        // Generous: chromium starts in a few seconds, slower with the suite beside it.
        let result = await running.wait(timeout: .seconds(300))
        // A process whose SIGCHLD is ignored reaps its children itself, and then `wait` reports at once: wait until
        // chromium's process is gone before reading what it wrote.
        let deadline = ContinuousClock.now + .seconds(300)
        while kill(running.pid, 0) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        #expect(!result.signaled, "chromium \(arguments) was killed: \(errors.suffix(2000))")
        let written = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(
            !written.isEmpty || arguments.contains { $0.hasPrefix("--screenshot") },
            "chromium \(arguments) wrote no DOM: \(errors.suffix(1500))"
        )
        return written
    }
}
