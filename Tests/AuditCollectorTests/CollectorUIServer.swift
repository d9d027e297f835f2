import AuditChain
import AuditCollector
import TestKit

/// A running collector holding ``UIFleetFixture``'s three logs, for the tests of its pages: ingest token `ingest`,
/// reads as asked (a read token, or public), and a witness of its own when asked.
enum CollectorUIServer {
    static let ingestToken = "ingest"

    /// Runs `body` with a client of the collector's port (one that follows no redirect and keeps no cookie), the
    /// collector and the fixture it holds. `witnessDown`: the witness is configured but stopped before the fixture
    /// is posted, so every cosignature fails.
    static func run(
        readToken: String? = nil,
        publicRead: Bool = false,
        witness: Bool = false,
        witnessDown: Bool = false,
        _ body: (AgentHTTPClient, Collector, UIFleetFixture) async throws -> Void
    ) async throws {
        let directory = CollectorTempDir()
        var configuration = directory.configuration()
        configuration.port = 0
        configuration.token = ingestToken
        configuration.readAccessToken = readToken
        configuration.publicRead = publicRead
        var service: WitnessService?
        if witness || witnessDown {
            let key = try CollectorKeyFile.loadOrCreate(path: directory.keyPath)
            let started = try WitnessService(logName: Collector.defaultName, logKey: key.publicKey)
            configuration.witnesses = [try await started.start()]
            configuration.witnessTimeout = .seconds(120)
            service = started
            if witnessDown { await started.stop() }
        }
        let server = try await CollectorServer(configuration: configuration)
        let fixture = UIFleetFixture()
        do {
            try await serveGracefully(server) { port in
                try await fixture.post(to: CollectorClient(port: port, token: ingestToken))
                try await body(AgentHTTPClient(target: .tcp(port)), server.collector, fixture)
            }
        } catch {
            await service?.stop()
            await server.collector.store.close()
            throw error
        }
        await service?.stop()
        await server.collector.store.close()
    }
}
