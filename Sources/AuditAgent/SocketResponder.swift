import AuditChain
import AuditServerKit
import AuditStore
import AuditSync
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The request context of the unix socket: Hummingbird's, plus the connection, whose peer credentials
/// (`SO_PEERCRED`) say who asks.
struct SocketRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The peer process's user id, or nil when the socket cannot tell.
    func peerUid() async -> uid_t? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET),
            name: SocketOptionName(SO_PEERCRED)
        )
        return try? await future.get().uid
    }
}

/// Linux's `struct ucred` (pid, uid, gid: three 32-bit integers, as `SO_PEERCRED` fills them); Glibc's module does
/// not export the C struct without `_GNU_SOURCE`.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// The unix socket's API: the ingest API (``IngestResponder``) and `POST /v1/erase` (docs/FORMAT.md section 13.9),
/// which the TCP listener does not offer. Only root and the agent's own user may erase (the socket's group may
/// append events, not destroy them); the erasure record names the peer's uid.
struct SocketResponder: HTTPResponder {
    typealias Context = SocketRequestContext

    let ingest: IngestResponder
    /// Largest erase request body.
    static let maxEraseBody = 8192

    func respond(to request: Request, context: SocketRequestContext) async throws -> Response {
        guard request.uri.path == "/v1/erase" else {
            let source = ApplicationRequestContextSource(channel: context.channel, logger: context.logger)
            return try await ingest.respond(to: request, context: BasicRequestContext(source: source))
        }
        guard request.method == .post else { return IngestResponder.methodNotAllowed("POST") }
        guard let uid = await context.peerUid() else {
            return IngestResponder.error(.forbidden, "the socket cannot tell who asks; erasure refused")
        }
        guard uid == 0 || uid == geteuid() else {
            return IngestResponder.error(.forbidden, "only root and the agent's user may erase (peer uid \(uid))")
        }
        return await erase(request, uid: uid)
    }

    /// `{"userId", "reason", "requestedBy"?, "confirm": true}` → the erasure as `auditctl erase --json` prints it.
    private func erase(_ request: Request, uid: uid_t) async -> Response {
        let body: [UInt8]
        do throws(BoundedBody.Refusal) {
            body = try await BoundedBody.read(request, maxBytes: Self.maxEraseBody)
        } catch {
            return IngestResponder.error(error.status, error.message)
        }
        guard let members = (try? JSONValue(parsing: body))?.objectValue,
            let user = members["userId"]?.stringValue, !user.isEmpty,
            let reason = members["reason"]?.stringValue, !reason.isEmpty, members["confirm"] == .bool(true)
        else {
            return IngestResponder.error(
                .badRequest,
                #"an erasure is {"userId": "...", "reason": "...", "confirm": true} (and "requestedBy" optionally)"#
            )
        }
        let named = members["requestedBy"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let requestedBy = "uid \(uid)" + (named.map { " (\($0))" } ?? "")
        do {
            let erasure = try await ingest.log.erase(userId: user, reason: reason, requestedBy: requestedBy)
            ingest.engine?.notify()
            ingest.logger.notice(
                "subject erased",
                metadata: [
                    "recordSeq": "\(erasure.recordSeq)", "entries": "\(erasure.entriesErased)", "peerUid": "\(uid)",
                ]
            )
            return IngestResponder.json(.ok, erasure.json)
        } catch let error as LogStoreError where error.code == .held {
            return IngestResponder.error(.conflict, error.description)
        } catch let error as LogStoreError where error.code == .invalidInput {
            return IngestResponder.error(.notFound, error.description)
        } catch {
            ingest.logger.error("erasure failed", metadata: ["error": "\(error)"])
            return IngestResponder.error(.serviceUnavailable, "the erasure failed; nothing was erased: \(error)")
        }
    }
}
