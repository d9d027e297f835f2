import AuditChain
public import Foundation
public import AuditWire

/// What the answer to a batch means for delivery (docs/DELIVERY.md, "Outage versus rejection").
public enum SyncVerdict: Sendable, Hashable {
    /// The backend answered per entry.
    case answered(SyncResponse)
    /// The backend is unreachable or failing as a whole: pause with backoff; per-entry attempts do not grow.
    case outage(reason: String, retryAfter: Duration?)
    /// Bad credentials (401, 403): pause and report; never burn attempts or DLQ entries over them.
    case unauthorized(reason: String)
    /// The batch is too large (413) or refused as a whole (400, 409, 422): split it to find the entry at fault.
    case split(reason: String)
}

/// What the transport saw.
public enum TransportOutcome: Sendable, Hashable {
    /// An HTTP response.
    case response(status: Int, retryAfter: String?, body: [UInt8])
    /// No response: connection refused or reset, timeout, DNS...
    case failure(String)
}

/// Maps transport outcomes to verdicts.
public enum SyncClassifier: Sendable {
    /// Classifies an outcome.
    /// - Parameters:
    ///   - now: wall time, for a Retry-After given as an HTTP date.
    ///   - maxRetryAfter: the cap on Retry-After.
    public static func classify(
        _ outcome: TransportOutcome,
        now: Date,
        maxRetryAfter: Duration
    ) -> SyncVerdict {
        switch outcome {
        case .failure(let reason):
            return .outage(reason: reason, retryAfter: nil)
        case .response(let status, let retryAfterText, let body):
            // A 200's body is parsed once, as the answer; only an error's body is read for its message.
            if status == 200 {
                do {
                    let json = try JSONValue(parsing: body)
                    return .answered(try SyncResponse(json: json))
                } catch {
                    return .outage(reason: "the backend's 200 response is malformed: \(error)", retryAfter: nil)
                }
            }
            let retryAfter = retryAfterText.flatMap { parseRetryAfter($0, now: now) }.map { min($0, maxRetryAfter) }
            let message = errorMessage(body)
            switch status {
            case 400 where message.hasPrefix("member \"v\""):
                // A collector that does not speak this version (one from before version 2 says exactly
                // `member "v" must be 1`): the batch is fine, splitting it would dead-letter every entry. An outage
                // until the collector is upgraded.
                return .outage(
                    reason: "the collector does not speak sync protocol version \(SyncWire.treeVersion) (HTTP 400: "
                        + "\(message)); upgrade the collector",
                    retryAfter: nil
                )
            case 401, 403:
                return .unauthorized(reason: "HTTP \(status)\(message.isEmpty ? "" : ": " + message)")
            case 413, 400, 409, 422:
                return .split(reason: "HTTP \(status)\(message.isEmpty ? "" : ": " + message)")
            default:
                // 408, 429, 5xx, and anything unexpected (404 from a misconfigured URL...): the backend as a whole
                // is not taking entries. Waiting loses nothing; dropping entries over it would.
                return .outage(reason: "HTTP \(status)\(message.isEmpty ? "" : ": " + message)", retryAfter: retryAfter)
            }
        }
    }

    /// Reads Retry-After: delay-seconds or an HTTP date (RFC 9110, section 10.2.3).
    public static func parseRetryAfter(_ text: String, now: Date) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(trimmed) { return seconds >= 0 ? .seconds(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        let seconds = date.timeIntervalSince(now)
        return .milliseconds(Int64(max(0, seconds) * 1000))
    }

    /// The `error` member of a JSON error body, or a short prefix of a text body.
    static func errorMessage(_ body: [UInt8]) -> String {
        guard !body.isEmpty else { return "" }
        if let json = try? JSONValue(parsing: body), let text = json.objectValue?["error"]?.stringValue {
            return String(text.prefix(500))
        }
        return String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
