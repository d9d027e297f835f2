package import AuditCollector
package import AuditWitness
package import Crypto
import AuditChain
import AuditWire
import TransparencyLog
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// A witness of a collector named `logName` with key `logKey`, served in-process on 127.0.0.1 (an ephemeral
/// port) from a database in `directory`: the same database, key and port again after ``stop()`` and ``start()``.
package final class WitnessService: Sendable {
    package let directory: TemporaryDirectory
    package let logName: String
    private let logKeyFile: String
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>)?>(nil)
    private let boundPort = Mutex<Int>(0)

    package init(logName: String, logKey: Curve25519.Signing.PublicKey) throws {
        directory = try TemporaryDirectory(prefix: "witness")
        self.logName = logName
        logKeyFile = directory.path + "/collector.key.json"
        try Data(CollectorPublicKeyText.json(logKey).utf8).write(to: URL(fileURLWithPath: logKeyFile))
    }

    /// The configuration: its database, key and name, the collector it witnesses.
    package var configuration: WitnessConfiguration {
        var configuration = WitnessConfiguration(
            databasePath: directory.path + "/witness.db",
            keyPath: directory.path + "/witness.key",
            name: "witness.test/w1",
            logName: logName,
            logKeyPath: logKeyFile
        )
        configuration.port = boundPort.withLock { $0 }
        return configuration
    }

    /// Starts serving; returns the endpoint a collector is configured with.
    @discardableResult
    package func start() async throws -> WitnessEndpoint {
        let server = try configuration.makeServer(logger: Logger(label: "witness-test"))
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = server.makeApplication { port in continuation.yield(port) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [application], logger: Logger(label: "witness-test"))
        )
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        guard let port = await ports.first(where: { _ in true }) else {
            throw WitnessError(.invalidConfiguration, "the witness did not start")
        }
        boundPort.withLock { $0 = port }
        running.withLock { $0 = (group, task) }
        return try WitnessEndpoint(url: "http://127.0.0.1:\(port)", key: server.witness.signer.verifierKey)
    }

    /// Stops serving (gracefully) until ``start()``.
    package func stop() async {
        guard
            let (group, task) = running.withLock({ value in
                defer { value = nil }
                return value
            })
        else { return }
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

/// The JSON of `GET /v1/collector/key` for a key, as an operator saves it.
enum CollectorPublicKeyText {
    static func json(_ key: Curve25519.Signing.PublicKey) -> String {
        String(decoding: CollectorPublicKey.json(key).canonicalBytes, as: UTF8.self)
    }
}
