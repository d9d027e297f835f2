import AuditSync
import ServiceLifecycle

/// The sync loop as a service: ``SyncEngine/run(idleInterval:)`` until a graceful shutdown or cancellation.
struct SyncService: Service, CustomStringConvertible {
    let engine: SyncEngine
    let interval: Duration

    func run() async throws {
        let engine = engine
        let interval = interval
        await cancelWhenGracefulShutdown { await engine.run(idleInterval: interval) }
    }

    var description: String { "sync" }
}
