import Foundation
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// One page of a headless chromium driven over its DevTools pipe (`--remote-debugging-pipe`): open a URL, run a
/// script in the page (DevTools' `Runtime.evaluate`, which the page's Content-Security-Policy does not govern), read
/// the DOM and the cookies the browser keeps. Blocking: run it on a thread of its own, never on the concurrency pool.
final class DevToolsSession {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pipe: ChildProcess.DevToolsPipe
    private var nextId = 1
    private var sessionId: String?
    /// How long one answer or one page load may take: generous, the suite keeps both cores busy.
    static let timeout: Int32 = 120

    init(pipe: ChildProcess.DevToolsPipe) {
        self.pipe = pipe
    }

    /// Sends a command (to the page once one is open, else to the browser) and returns its result.
    @discardableResult
    func call(_ method: String, _ parameters: [String: Any] = [:], toBrowser: Bool = false) throws -> [String: Any] {
        let id = nextId
        nextId += 1
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if !toBrowser, let sessionId { message["sessionId"] = sessionId }
        try pipe.send(Array(try JSONSerialization.data(withJSONObject: message)))
        while true {
            let bytes = try pipe.receive(timeout: Self.timeout)
            let reply = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
            // Events and answers to earlier commands are skipped.
            guard reply["id"] as? Int == id else { continue }
            if let error = reply["error"] { throw Failure(description: "\(method): \(error)") }
            return reply["result"] as? [String: Any] ?? [:]
        }
    }

    /// Opens `url` in a new page and attaches to it.
    func open(_ url: String) throws {
        let target = try call("Target.createTarget", ["url": url], toBrowser: true)["targetId"] as? String ?? ""
        let attached = try call("Target.attachToTarget", ["targetId": target, "flatten": true], toBrowser: true)
        sessionId = attached["sessionId"] as? String
        guard sessionId != nil else { throw Failure(description: "no DevTools session for \(url)") }
    }

    /// The value of `expression` evaluated in the page.
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true])
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until a page whose path is `path` has loaded, and is not the page marked by ``mark()``.
    func waitFor(path: String) throws {
        let deadline = ContinuousClock.now + .seconds(Int(Self.timeout))
        let check = "document.readyState === 'complete' && window.__auditMark === undefined ? location.pathname : ''"
        while ContinuousClock.now < deadline {
            if (try? evaluate(check)) as? String == path { return }
            usleep(50_000)
        }
        throw Failure(
            description: "the page \(path) did not load; at \(String(describing: try? evaluate("location.href")))"
        )
    }

    /// Marks the current page, so that ``waitFor(path:)`` waits for the next one.
    func mark() throws {
        _ = try evaluate("window.__auditMark = true")
    }

    /// The page's DOM, serialized.
    func dom() throws -> String {
        try evaluate("document.documentElement.outerHTML") as? String ?? ""
    }

    /// The cookies the browser would send to the page's URL.
    func cookies() throws -> [[String: Any]] {
        try call("Network.getCookies")["cookies"] as? [[String: Any]] ?? []
    }

    /// Closes the browser.
    func close() {
        _ = try? call("Browser.close", toBrowser: true)
    }
}
