import AuditChain
import AuditSync
import AuditWire
import Foundation
import Testing

/// The batch-level answers of docs/DELIVERY.md ("Outage versus rejection") and PROTOCOL.md section 2.2, as
/// `SyncClassifier` maps them: outage, unauthorized, split or answered, with Retry-After read and capped.
@Suite("SyncClassifier")
struct SyncClassifierTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let cap: Duration = .seconds(3600)

    static func classify(
        _ status: Int,
        retryAfter: String? = nil,
        body: [UInt8] = [],
        cap: Duration = cap
    ) -> SyncVerdict {
        SyncClassifier.classify(
            .response(status: status, retryAfter: retryAfter, body: body),
            now: now,
            maxRetryAfter: cap
        )
    }

    /// The verdict's name, for table assertions.
    static func kind(_ verdict: SyncVerdict) -> String {
        switch verdict {
        case .answered: "answered"
        case .outage: "outage"
        case .unauthorized: "unauthorized"
        case .split: "split"
        }
    }

    /// The Retry-After of an outage; nil for any other verdict or none given.
    static func retryAfter(_ verdict: SyncVerdict) -> Duration? {
        guard case .outage(_, let retryAfter) = verdict else { return nil }
        return retryAfter
    }

    /// The reason of an outage, an unauthorized or a split verdict.
    static func reason(_ verdict: SyncVerdict) -> String? {
        switch verdict {
        case .outage(let reason, _), .unauthorized(let reason), .split(let reason): reason
        case .answered: nil
        }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    static let validBody: [UInt8] = SyncResponse(
        results: [
            SyncEntryResult(seq: 4, status: .accepted),
            SyncEntryResult(seq: 5, status: .rejected, code: 503, reason: "unknown signing key"),
        ],
        receipt: nil
    ).json.canonicalBytes

    @Test("no HTTP answer at all (refused, reset, timeout, DNS) is an outage without Retry-After")
    func networkFailure() {
        let verdict = SyncClassifier.classify(.failure("connection refused"), now: Self.now, maxRetryAfter: Self.cap)
        #expect(verdict == .outage(reason: "connection refused", retryAfter: nil))
    }

    @Test(
        "every whole-request status maps to the verdict of the table",
        arguments: [
            (401, "unauthorized"), (403, "unauthorized"),
            (400, "split"), (409, "split"), (413, "split"), (422, "split"),
            (408, "outage"), (429, "outage"), (500, "outage"), (502, "outage"), (503, "outage"), (504, "outage"),
            (507, "outage"), (599, "outage"), (404, "outage"), (415, "outage"), (301, "outage"), (201, "outage"),
        ]
    )
    func statusTable(status: Int, expected: String) {
        #expect(Self.kind(Self.classify(status, body: Self.validBody)) == expected)
    }

    @Test("a 200 with a valid body is answered with the collector's per-entry results, in order")
    func answered() throws {
        let verdict = Self.classify(200, body: Self.validBody)
        let expected = try SyncResponse(json: JSONValue(parsing: Self.validBody))
        #expect(verdict == .answered(expected))
        guard case .answered(let response) = verdict else { return }
        #expect(response.results.map(\.seq) == [4, 5])
        #expect(response.results[1].isRetryable)
    }

    @Test(
        "a 200 whose body is not a response is an outage, never an answer, and its Retry-After is ignored",
        arguments: [
            "",
            "<html>ok</html>",
            #"{"v":1}"#,
            #"{"v":3,"results":[]}"#,
            #"{"v":1,"results":[{"seq":-1,"status":"accepted","code":200}]}"#,
            #"{"v":1,"results":[{"seq":1,"status":"stored","code":200}]}"#,
            #"{"v":1,"results":[{"seq":1,"status":"rejected","code":600}]}"#,
            #"{"v":1,"results":[{"seq":18446744073709551616,"status":"accepted","code":200}]}"#,
        ]
    )
    func malformed200(body: String) {
        let verdict = Self.classify(200, retryAfter: "120", body: Array(body.utf8))
        #expect(Self.kind(verdict) == "outage")
        #expect(Self.retryAfter(verdict) == nil)
        #expect(Self.reason(verdict)?.contains("malformed") == true)
    }

    @Test("a collector from before version 2 refuses the version: an outage to upgrade it, never a split")
    func olderCollectorIsAnOutage() {
        let verdict = Self.classify(400, retryAfter: nil, body: Array(#"{"error":"member \"v\" must be 1"}"#.utf8))
        #expect(Self.kind(verdict) == "outage")
        #expect(Self.reason(verdict)?.contains("upgrade the collector") == true)
        // Any other 400 still splits the batch.
        let other = Self.classify(400, retryAfter: nil, body: Array(#"{"error":"member \"batchId\" must be"}"#.utf8))
        #expect(Self.kind(other) == "split")
    }

    @Test("the reason names the status and the collector's words: a JSON error member, or a text body trimmed")
    func reasons() {
        let json = Array(#"{"error":"member \"batchId\" must be a string"}"#.utf8)
        #expect(Self.reason(Self.classify(400, body: json)) == #"HTTP 400: member "batchId" must be a string"#)
        #expect(Self.reason(Self.classify(401, body: Array(#"{"error":"bad token"}"#.utf8))) == "HTTP 401: bad token")
        #expect(Self.reason(Self.classify(502, body: Array("  Bad Gateway\n".utf8))) == "HTTP 502: Bad Gateway")
        #expect(Self.reason(Self.classify(503)) == "HTTP 503")
        // A JSON body without an "error" string is quoted as text.
        #expect(Self.reason(Self.classify(500, body: Array(#"{"error":7}"#.utf8))) == #"HTTP 500: {"error":7}"#)
    }

    @Test("a long error is cut: 500 characters of a JSON error, 200 bytes of a text body")
    func longReasons() {
        let long = String(repeating: "x", count: 5000)
        let json = Array(#"{"error":"\#(long)"}"#.utf8)
        #expect(Self.reason(Self.classify(503, body: json)) == "HTTP 503: " + String(repeating: "x", count: 500))
        #expect(
            Self.reason(Self.classify(503, body: Array(long.utf8))) == "HTTP 503: " + String(repeating: "x", count: 200)
        )
    }

    @Test(
        "Retry-After in seconds is honoured on an outage, up to the cap",
        arguments: [
            ("120", Duration.seconds(120)),
            (" 120 ", .seconds(120)),
            ("0", .zero),
            ("3600", .seconds(3600)),
            ("3601", .seconds(3600)),
            ("999999", .seconds(3600)),
            ("9223372036854775807", .seconds(3600)),
        ]
    )
    func retryAfterSeconds(text: String, expected: Duration) {
        for status in [408, 429, 500, 503] {
            #expect(Self.retryAfter(Self.classify(status, retryAfter: text)) == expected)
        }
    }

    @Test(
        "a Retry-After that is neither delay-seconds nor an HTTP date is ignored, whatever its size",
        arguments: ["", "soon", "-5", "1.5", "12s", "18446744073709551616", "99999999999999999999999999"]
    )
    func retryAfterUnreadable(text: String) {
        let verdict = Self.classify(503, retryAfter: text)
        #expect(Self.kind(verdict) == "outage")
        #expect(Self.retryAfter(verdict) == nil)
        #expect(SyncClassifier.parseRetryAfter(text, now: Self.now) == nil)
    }

    @Test("Retry-After as an HTTP date: the time until it, zero for a date in the past, capped")
    func retryAfterDate() {
        let soon = Self.httpDate(Self.now.addingTimeInterval(90))
        #expect(Self.retryAfter(Self.classify(503, retryAfter: soon)) == .seconds(90))
        let past = Self.httpDate(Self.now.addingTimeInterval(-86_400))
        #expect(Self.retryAfter(Self.classify(503, retryAfter: past)) == .zero)
        let far = Self.httpDate(Self.now.addingTimeInterval(30 * 86_400))
        #expect(Self.retryAfter(Self.classify(429, retryAfter: far)) == Self.cap)
        #expect(SyncClassifier.parseRetryAfter(far, now: Self.now) == .seconds(30 * 86_400))
        #expect(SyncClassifier.parseRetryAfter("Fri, 31 Feb 2027 25:61:00 GMT", now: Self.now) == nil)
    }

    @Test("a cap of zero makes every Retry-After zero (the schedule alone decides)")
    func zeroCap() {
        #expect(Self.retryAfter(Self.classify(503, retryAfter: "120", cap: .zero)) == .zero)
    }

    @Test("credentials refused and batches to split carry no Retry-After: they are not outages")
    func retryAfterOnlyForOutages() {
        #expect(Self.classify(401, retryAfter: "120") == .unauthorized(reason: "HTTP 401"))
        #expect(Self.classify(413, retryAfter: "120") == .split(reason: "HTTP 413"))
    }
}
