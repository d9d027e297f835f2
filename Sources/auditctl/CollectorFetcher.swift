import AsyncHTTPClient
import AuditChain
import AuditHTTPClient
import AuditSupport
import Foundation
import NIOCore
import NIOHTTP1

/// GET requests to a collector, for `prove` and `verify-consistency --collector`: AsyncHTTPClient, set up as the
/// agent's transport sets it up (``AuditHTTPClient/HTTPClients``), or with certificate pins
/// ``AuditHTTPClient/PinnedHTTPClient``. No
/// redirect is followed and nothing is decompressed; every answer is read up to a bound the caller gives, and a
/// larger one is refused.
struct CollectorFetcher {
    /// An HTTP answer: its status and body.
    struct Answer {
        var status: Int
        var body: [UInt8]
    }

    /// The collector's base URL, without a trailing slash: `http://127.0.0.1:8080`.
    let base: String
    /// The bearer token, when the collector requires one.
    let token: String?
    /// The TLS settings of an `https://` collector; nil for the system's roots, no pin, no client certificate.
    let tls: SyncTLS?
    /// The deadline of one request, connection included.
    var timeout: TimeAmount = .seconds(30)

    /// A fetcher of `collector`, a `http://` or `https://` URL with no query.
    /// - Throws: ``CLIError`` for another URL, or pins for an `http://` one (nothing would check them).
    init(collector: String, token: String?, tls: SyncTLS? = nil) throws {
        guard let url = URL(string: collector), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            url.host != nil, url.query == nil, url.fragment == nil
        else {
            throw CLIError("--collector: \"\(collector)\" is not an http:// or https:// URL")
        }
        if scheme == "http", tls?.pins.isEmpty == false {
            throw CLIError("--pin-sha256 pins an https:// collector's key; \(collector) is plain http")
        }
        var base = collector
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.token = token
        self.tls = tls
    }

    /// `GET <base><path>`: the status and the body.
    ///
    /// - Parameters:
    ///   - path: the path and query, starting with `/`.
    ///   - maxBytes: the largest body read.
    /// - Throws: ``CLIError`` when no answer came (connection refused, timeout) or the body is larger than `maxBytes`.
    func get(_ path: String, maxBytes: Int) async throws -> Answer {
        guard let url = URL(string: base + path), url.host != nil else {
            throw CLIError("GET \(base + path): not a URL")
        }
        let https = url.scheme?.lowercased() == "https"
        if let tls,
            let client = PinnedHTTPClient(url: url, tls: tls, connectTimeout: .seconds(10), reuseConnections: false)
        {
            var headers = HTTPHeaders()
            if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
            do {
                let answer = try await client.execute(
                    .GET,
                    PinnedHTTPClient.target(of: url),
                    headers: headers,
                    timeout: .nanoseconds(timeout.nanoseconds),
                    maxResponseBytes: maxBytes
                )
                return Answer(status: answer.status, body: answer.body)
            } catch is NIOTooManyBytesError {
                throw CLIError("the collector's answer to GET \(path) is larger than \(maxBytes) bytes")
            } catch {
                throw CLIError("GET \(base + path): no answer from the collector (\(await describe(error, url)))")
            }
        }
        var request = HTTPClientRequest(url: base + path)
        request.method = .GET
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let tls, https { request.tlsConfiguration = tls.configuration }
        do {
            let response = try await Self.client.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: maxBytes)
            return Answer(status: Int(response.status.code), body: Array(body.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw CLIError("the collector's answer to GET \(path) is larger than \(maxBytes) bytes")
        } catch {
            throw CLIError("GET \(base + path): no answer from the collector (\(await describe(error, url)))")
        }
    }

    /// The command's client, never shut down (the process ends with the command).
    private static let client = HTTPClients.make(connectTimeout: .seconds(10))

    /// Why a request to `url` got no answer, shortly; a TLS failure says which, as the agent says it (expired,
    /// unknown CA, wrong host name, pin mismatch).
    func describe(_ error: any Error, _ url: URL) async -> String {
        if let error = error as? PinnedHTTPClient.Failure { return error.description }
        if url.scheme?.lowercased() == "https", let host = url.host,
            let reason = await TLSDiagnosis.reason(for: error, host: host, port: url.port ?? 443)
        {
            return reason
        }
        return Self.describe(error)
    }

    /// Why a request got no answer, shortly.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError,
            [.deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout].contains(error)
        {
            return "timeout"
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }

    /// The text of an error answer `{"error":"...","reason":"..."}` (the reason, when there is one, in brackets: the
    /// read API's 404s name their case, docs/COLLECTOR-API.md section 2.4), or of the body; on one line, at most 300
    /// characters, without control characters: it comes from the network and is printed to a terminal.
    static func reason(_ answer: Answer) -> String {
        let members = (try? JSONValue(parsing: answer.body))?.objectValue
        var text = members?["error"]?.stringValue ?? String(decoding: answer.body.prefix(300), as: UTF8.self)
        if let reason = members?["reason"]?.stringValue { text += " [\(printable(reason, limit: 40))]" }
        return printable(text)
    }

    /// `text` with control characters replaced and cut to `limit` characters.
    static func printable(_ text: String, limit: Int = 300) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }
            )
        )
        return cleaned.count > limit ? String(cleaned.prefix(limit)) + "..." : cleaned
    }
}

/// Reads the bearer token of `--token` or `--token-file`: a file must be private (mode 0600, as key files) and hold
/// one non-empty line.
func bearerToken(token: String?, tokenFile: String?) throws -> String? {
    if token != nil, tokenFile != nil { throw CLIError("give --token or --token-file, not both") }
    guard let tokenFile else { return token }
    do {
        return try TokenFile.read(tokenFile)
    } catch {
        throw CLIError(error.description)
    }
}
