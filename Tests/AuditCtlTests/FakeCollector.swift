import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A stand-in for the collector's proof endpoints on 127.0.0.1: answers `GET /v1/logs/{logId}/proof` and
/// `.../proof/consistency` with what the test sets (well-formed, forged or hostile), and records each request's path
/// and `Authorization` header. The real endpoints are tested against a real collector.
final class FakeCollector: Sendable {
    /// One answer.
    struct Reply: Sendable {
        var status: Int = 200
        var body: [UInt8]
    }

    /// A request as the server saw it.
    struct Request: Sendable, Equatable {
        var path: String
        var authorization: String?
    }

    private let state = Mutex<(reply: Reply, requests: [Request])>((Reply(body: []), []))

    /// Answers `reply` from now on.
    func answer(_ reply: Reply) { state.withLock { $0.reply = reply } }

    /// Answers `body` with status 200 from now on.
    func answer(_ body: [UInt8]) { answer(Reply(body: body)) }

    /// The requests received so far.
    var requests: [Request] { state.withLock { $0.requests } }

    /// Serves for the duration of `body`, which gets the base URL, then shuts down gracefully.
    func serve<T: Sendable>(_ body: (String) async throws -> T) async throws -> T {
        let router = Router(context: BasicRequestContext.self)
        router.get("/v1/logs/:logId/proof") { request, _ in self.reply(to: request) }
        router.get("/v1/logs/:logId/proof/consistency") { request, _ in self.reply(to: request) }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "fake-collector")
        )
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [application], logger: Logger(label: "fake-collector"))
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { continuation.finish() }
                try await services.run()
            }
            guard let port = await ports.first(where: { _ in true }) else {
                throw CLIHarnessError("the fake collector did not start")
            }
            do {
                let result = try await body("http://127.0.0.1:\(port)")
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
        }
    }

    private func reply(to request: Hummingbird.Request) -> Response {
        let reply = state.withLock { state in
            state.requests.append(
                Request(path: request.uri.description, authorization: request.headers[.authorization])
            )
            return state.reply
        }
        var response = Response(
            status: HTTPResponse.Status(code: reply.status),
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body))
        )
        response.headers[.contentType] = "application/json"
        return response
    }
}

/// A test harness that could not do its part.
struct CLIHarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
