import AsyncHTTPClient
import AuditHTTPClient
import NIOCore
import NIOHTTP1
import TransparencyLog

/// Calls one witness's `add-checkpoint` (c2sp.org/tlog-witness) with a deadline and a bound on the answer.
struct WitnessClient: Sendable {
    /// What the witness answered.
    enum Reply: Sendable, Equatable {
        /// 200: its signature lines (not verified yet).
        case cosigned([SignedNote.Signature])
        /// 409 with its size (`text/x.tlog.size`).
        case conflict(UInt64)
        /// Any other answer: the status and the first bytes of the body.
        case refused(Int, String)
        /// No answer (refused connection, timeout, malformed answer).
        case failed(String)
    }

    let endpoint: WitnessEndpoint
    let timeout: Duration

    /// Bytes of an answer read at most.
    static let maxResponseBytes = 16 << 10

    /// One client for the process, never shut down, as delivery's: a refused connection fails at once (the ingest
    /// answer must not wait for a witness that is down), no redirects, no decompression.
    private static let client = HTTPClients.make(connectTimeout: .seconds(2))

    /// Posts `body` to `<url>/add-checkpoint`.
    func addCheckpoint(_ body: [UInt8]) async -> Reply {
        var request = HTTPClientRequest(url: endpoint.url + "/add-checkpoint")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        request.body = .bytes(ByteBuffer(bytes: body))
        let status: Int
        let contentType: String
        let bytes: [UInt8]
        do {
            let response = try await Self.client.execute(
                request,
                timeout: .milliseconds(Int64(timeout / .milliseconds(1)))
            )
            status = Int(response.status.code)
            contentType = response.headers.first(name: "Content-Type") ?? ""
            bytes = Array(try await response.body.collect(upTo: Self.maxResponseBytes).readableBytesView)
        } catch {
            return .failed("\(error)")
        }
        switch status {
        case 200:
            do {
                return .cosigned(try AddCheckpointResponse.cosignatures(parsing: bytes))
            } catch {
                return .failed("the witness's 200 answer is malformed: \(error)")
            }
        case 409 where contentType.lowercased().hasPrefix(AddCheckpointResponse.sizeContentType):
            do {
                return .conflict(try AddCheckpointResponse.size(parsing: bytes))
            } catch {
                return .failed("the witness's 409 answer is malformed: \(error)")
            }
        default:
            let text = String(decoding: bytes.prefix(200), as: UTF8.self)
                .filter { !$0.isNewline }
            return .refused(status, text)
        }
    }
}
