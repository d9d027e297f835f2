import AsyncHTTPClient
@testable import AuditHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Testing

@Suite struct HTTPClientsTests {
    @Test("every client runs on the one shared event-loop group")
    func oneGroup() async throws {
        let first = HTTPClients.make(connectTimeout: .seconds(2))
        let second = HTTPClients.make(connectTimeout: .seconds(5), connectionsPerHost: 16)
        #expect(first.eventLoopGroup === MultiThreadedEventLoopGroup.singleton)
        #expect(second.eventLoopGroup === HTTPClients.eventLoopGroup)
        try await first.shutdown()
        try await second.shutdown()
    }

    @Test("a refused connection fails the request with the refusal, not after retrying until the deadline")
    func refusedAtOnce() async throws {
        // A port that was free a moment ago: bound, then closed.
        let channel = try await ServerBootstrap(group: HTTPClients.eventLoopGroup).bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress?.port ?? 1
        try await channel.close()
        let client = HTTPClients.make(connectTimeout: .seconds(5))
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/")
        let error = await #expect(throws: (any Error).self) {
            _ = try await client.execute(request, timeout: .seconds(60))
        }
        #expect(error.map { "\($0)" }?.lowercased().contains("refused") == true, "\(String(describing: error))")
        try await client.shutdown()
    }
}
