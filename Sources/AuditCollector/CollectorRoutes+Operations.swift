import AuditChain
import AuditWire
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension CollectorRoutes {
    /// Reads the log's epochs for its per-log series when the batch may have moved them (rare: the first batch of a
    /// log this replica keeps, and batches that store an epoch, close or crash recovery record).
    func refreshEpoch(_ batch: SyncBatch, _ response: SyncResponse) async {
        let accepted = Set(response.results.filter { $0.status == .accepted }.map(\.seq))
        let stored = batch.entries.filter { accepted.contains($0.seq) }.map(\.bytes)
        guard metrics.wantsEpoch(logId: batch.logId, stored: stored) else { return }
        do {
            metrics.observed(epoch: try await collector.store.epochStatus(logId: batch.logId), logId: batch.logId)
        } catch {
            logger.warning("reading a log's epochs for the metrics failed", metadata: ["error": "\(error)"])
        }
    }

    /// Counts a processed batch and logs it at debug level (counts only: never entry contents).
    func recordIngest(_ batch: SyncBatch, _ response: SyncResponse, duration: Duration, verifyDuration: Duration?) {
        let head = response.receipt?.seq ?? response.treeReceipt?.seq
        metrics.ingested(
            logId: batch.logId,
            results: response.results,
            head: head,
            duration: duration,
            verifyDuration: verifyDuration
        )
        guard logger.logLevel <= .debug else { return }
        var counts: [SyncEntryResult.Status: Int] = [:]
        for result in response.results { counts[result.status, default: 0] += 1 }
        logger.debug(
            "batch processed",
            metadata: [
                "logId": "\(Hex.encode(batch.logId))", "entries": "\(batch.entries.count)",
                "accepted": "\(counts[.accepted] ?? 0)", "duplicate": "\(counts[.duplicate] ?? 0)",
                "rejected": "\(counts[.rejected] ?? 0)", "head": "\(head.map { "\($0)" } ?? "none")",
                "durationMs": "\(Int(CollectorMetrics.seconds(duration) * 1000))",
            ]
        )
    }
}

/// The operations endpoints, without a token: `GET /healthz` and `GET /readyz` on every listener (load balancers
/// probe them), `GET /metrics` on the metrics listener. They answer nothing but fixed phrases and counts.
struct OperationsRoutes: Sendable {
    let readiness: CollectorReadiness
    /// Renders the exposition at a scrape; nil on a listener that does not serve metrics.
    let metricsText: (@Sendable () -> String)?

    func register(on router: Router<BasicRequestContext>) {
        for method in [HTTPRequest.Method.get, .head] {
            router.on("/healthz", method: method) { _, _ in Self.healthz() }
            router.on("/readyz", method: method) { _, _ in await readyz() }
        }
        if let metricsText {
            router.get("/metrics") { _, _ in Self.metrics(metricsText()) }
        }
    }

    /// 200 while the process serves.
    static func healthz() -> Response {
        probe(.ok, .object(["status": "ok"]))
    }

    /// 200 when ready, else 503 with the reason (draining, or the database not answering).
    func readyz() async -> Response {
        switch await readiness.verdict() {
        case .ready:
            return Self.probe(.ok, .object(["status": "ready"]))
        case .notReady(let reason):
            return Self.probe(.serviceUnavailable, .object(["status": "not ready", "reason": .string(reason)]))
        }
    }

    static func metrics(_ text: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: CollectorMetrics.contentType, .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }

    static func probe(_ status: HTTPResponse.Status, _ body: JSONValue) -> Response {
        var response = CollectorRoutes.json(status, body)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
