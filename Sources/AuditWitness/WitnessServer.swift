public import AuditServerKit
public import Hummingbird
public import Logging
import HTTPTypes
import NIOCore
import TransparencyLog

/// The witness's HTTP server (Hummingbird): `POST /add-checkpoint` (c2sp.org/tlog-witness) over a ``Witness``, with
/// the listener's request deadlines and connection limits. The submission prefix is the server's root.
public struct WitnessServer: Sendable {
    /// The logic behind the route.
    public let witness: Witness
    /// Address to bind.
    public let host: String
    /// Port to bind (0: any free port; the bound port is passed to `onRunning`).
    public let port: Int
    /// Where failures are logged.
    public let logger: Logger
    /// The connections the listener holds.
    public let connections: ConnectionTable

    /// Request bodies read at most (the request parser's limit).
    static let maxBodyBytes = AddCheckpointRequest.Limits().maxBytes

    /// Creates a server.
    public init(witness: Witness, host: String, port: Int, limits: ServerLimits = ServerLimits(), logger: Logger) {
        self.witness = witness
        self.host = host
        self.port = port
        self.logger = logger
        connections = ConnectionTable(limits: limits)
    }

    /// The Hummingbird application serving the route.
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    public func makeApplication(
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        let witness = witness
        router.post("/add-checkpoint") { request, _ in
            let body: [UInt8]
            do throws(BoundedBody.Refusal) {
                body = try await BoundedBody.read(request, maxBytes: Self.maxBodyBytes)
            } catch {
                guard case .tooLarge = error else {
                    return Self.response(Witness.text(Int(error.status.code), error.message))
                }
                // The witness's plain-text answers say the same whether the length was declared or counted.
                return Self.response(Witness.text(413, "the body is larger than \(Self.maxBodyBytes) bytes"))
            }
            return Self.response(await witness.addCheckpoint(body))
        }
        return Application(
            router: router,
            server: GuardedHTTPServer.http1(table: connections, logger: logger),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                backlog: ServerLimits.listenBacklog
            ),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// Serves until the calling task is cancelled.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await makeApplication(onRunning: onRunning).run()
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully.
    public func runUntilSignalled(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await makeApplication(onRunning: onRunning).runService()
    }

    static func response(_ answer: Witness.Answer) -> Response {
        var response = Response(
            status: HTTPResponse.Status(code: answer.status),
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body))
        )
        response.headers[.contentType] = answer.contentType
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
