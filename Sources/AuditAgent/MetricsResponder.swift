import AuditStore
import AuditSync
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Serves `GET /metrics` (Prometheus text format 0.0.4); everything else is 404 or 405.
struct MetricsResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let log: AuditLog
    let engine: SyncEngine?
    let policy: DeliveryPolicy
    let logger: Logger

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        guard request.uri.path == "/metrics" else {
            return IngestResponder.error(.notFound, "no such endpoint: use GET /metrics")
        }
        guard request.method == .get || request.method == .head else {
            return IngestResponder.methodNotAllowed("GET")
        }
        do {
            let metrics = try await AgentMetrics.collect(log: log, engine: engine, policy: policy)
            return Response(
                status: .ok,
                headers: [.contentType: AgentMetrics.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.text))
            )
        } catch {
            logger.error("reading metrics failed", metadata: ["error": "\(error)"])
            return IngestResponder.error(.serviceUnavailable, "metrics cannot be read now")
        }
    }
}
