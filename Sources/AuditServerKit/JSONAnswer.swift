public import AuditChain
public import HTTPTypes
public import HummingbirdCore
import NIOCore

/// The servers' JSON answers: a value as canonical JSON and a newline, `Content-Type: application/json`; an error as
/// `{"error": "<readable reason>", ...}` (docs/PROTOCOL.md section 2 for the collector; contrib/README.md for the
/// agent's ingest API, whose errors add `"code"`; the collector's read API adds `"reason"`).
public enum JSONAnswer: Sendable {
    /// `value` as canonical JSON and a newline, with `status`.
    public static func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.canonicalBytes + [0x0a]))
        )
    }

    /// `{"error": message}` with `members` beside it (an endpoint's own members, e.g. `"code"`), with `status`.
    public static func error(
        _ status: HTTPResponse.Status,
        _ message: String,
        _ members: [String: JSONValue] = [:]
    ) -> Response {
        var object = members
        object["error"] = .string(message)
        return json(status, .object(object))
    }
}
