import AsyncHTTPClient
import AuditChain
import AuditHTTPClient
import AuditSync
import AuditWire
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// The simulated fleet's side of the wire: one HTTP client for every device, posting `POST /v1/audit/events` to the
/// replicas as `HTTPSyncTransport` does (the same body and headers).
///
/// Not `HTTPSyncTransport` itself: it keeps two connections per host for the whole process (one agent, one
/// collector), so ten thousand devices behind it would queue in the client's pool, and the lag measured would be
/// that queue's. Real devices each open their own connection; here each replica gets `connectionsPerReplica`
/// kept-alive connections (below the collector's limit per peer address, `ServerLimits.maxConnectionsPerPeer`).
final class SimulationClient: Sendable {
    /// The events endpoint of each replica.
    let urls: [String]
    /// The collector key that signs every replica's checkpoints (the replicas share one key file).
    let collectorKey: Curve25519.Signing.PublicKey
    private let client: HTTPClient

    /// Connects to the replicas on loopback `ports` and fetches the collector's key from the first.
    static func connect(ports: [Int], connectionsPerReplica: Int) async throws -> SimulationClient {
        let base = URL(string: "http://127.0.0.1:\(ports[0])")!
        guard let key = await HTTPSyncTransport(backend: base, token: nil).collectorKey() else {
            throw BenchError("the collector's key could not be fetched from \(base)")
        }
        return SimulationClient(ports: ports, key: key, connectionsPerReplica: connectionsPerReplica)
    }

    private init(ports: [Int], key: Curve25519.Signing.PublicKey, connectionsPerReplica: Int) {
        urls = ports.map { "http://127.0.0.1:\($0)" + SyncWire.eventsPath }
        collectorKey = key
        client = HTTPClients.make(connectTimeout: .seconds(10), connectionsPerHost: connectionsPerReplica)
    }

    /// What a replica answered to one batch.
    enum Answer: Sendable {
        /// An HTTP answer: its status and body.
        case response(status: Int, body: [UInt8])
        /// No answer (connection refused or lost, timeout).
        case failure(String)
    }

    /// Posts `batch` to replica `replica`.
    func send(_ batch: SyncBatch, to replica: Int) async -> Answer {
        var request = HTTPClientRequest(url: urls[replica])
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: batch.batchId)
        request.body = .bytes(ByteBuffer(bytes: batch.json.canonicalBytes))
        do {
            let response = try await client.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 8 << 20)
            return .response(status: Int(response.status.code), body: Array(body.readableBytesView))
        } catch {
            return .failure(String(describing: error))
        }
    }

    /// Closes the connections (an `HTTPClient` must be shut down before it is released).
    func shutdown() async {
        try? await client.shutdown()
    }
}
