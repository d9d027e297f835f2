import AuditServerKit
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP listener (a Hummingbird application) as a service, its connections under the deadlines and limits of
/// its ``ConnectionTable``. For a unix socket it sets the socket's mode right after binding and removes the socket
/// file when it stops.
struct Listener<Responder: HTTPResponder>: Service, CustomStringConvertible
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let name: String
    let responder: Responder
    let address: BindAddress
    let connections: ConnectionTable
    let onBound: @Sendable (Int?) -> Void
    var socketPath: String?
    var socketMode: UInt16 = 0o660
    var logger = Logger(label: "auditd")

    init(
        name: String,
        responder: Responder,
        address: BindAddress,
        connections: ConnectionTable,
        logger: Logger = Logger(label: "auditd"),
        onBound: @escaping @Sendable (Int?) -> Void
    ) {
        self.name = name
        self.responder = responder
        self.address = address
        self.connections = connections
        self.logger = logger
        self.onBound = onBound
    }

    /// The same listener on a unix socket at `path`, chmod-ed to `mode` after binding.
    func socket(path: String, mode: UInt16) -> Self {
        var copy = self
        copy.socketPath = path
        copy.socketMode = mode
        return copy
    }

    var description: String { name }

    func run() async throws {
        let bound = BoundFlag()
        let (name, socketPath, socketMode, onBound, logger) = (name, socketPath, socketMode, onBound, logger)
        let application = Application(
            responder: responder,
            server: GuardedHTTPServer.http1(table: connections, logger: logger),
            configuration: ApplicationConfiguration(address: address, backlog: ServerLimits.listenBacklog),
            onServerRunning: { channel in
                if let socketPath {
                    bound.set()
                    guard chmod(socketPath, mode_t(socketMode)) == 0 else {
                        logger.error(
                            "cannot set the socket's mode; closing it",
                            metadata: ["socket": "\(socketPath)", "errno": "\(errno)"]
                        )
                        try? await channel.close()
                        return
                    }
                }
                let port = channel.localAddress?.port
                var metadata: Logger.Metadata = ["listener": "\(name)"]
                if let socketPath { metadata["socket"] = "\(socketPath)" }
                if let port { metadata["port"] = "\(port)" }
                logger.info("listening", metadata: metadata)
                onBound(port)
            },
            logger: logger
        )
        defer {
            if let socketPath, bound.isSet, unlink(socketPath) == 0 {
                logger.info("removed the socket", metadata: ["socket": "\(socketPath)"])
            }
        }
        try await application.run()
    }
}

/// Whether a socket was bound (so only a socket this process created is removed).
final class BoundFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
