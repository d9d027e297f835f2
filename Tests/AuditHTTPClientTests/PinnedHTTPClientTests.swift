@testable import AuditHTTPClient
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// ``PinnedHTTPClient``'s answer handler on an embedded channel: an answer is read whole up to its bound, 1xx
/// answers are skipped, and a connection lost before or during an answer says which (a kept-alive connection is
/// replaced only when nothing of the answer had come).
@Suite("Pinned HTTP client: answers")
struct PinnedHTTPClientTests {
    typealias Answer = PinnedHTTPClient.Answer

    /// An active embedded channel with the handler, a request sent on it, and what its promise got.
    final class Exchange {
        let channel = EmbeddedChannel()
        let handler = PinnedHTTPClient.AnswerHandler()
        var result: Result<Answer, any Error>?

        init(maxBytes: Int = 1024) throws {
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            let promise = channel.eventLoop.makePromise(of: Answer.self)
            promise.futureResult.assumeIsolated().whenComplete { self.result = $0 }
            var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/v1/audit/events")
            head.headers.add(name: "Content-Length", value: "2")
            handler.send(head: head, body: [1, 2], maxBytes: maxBytes, promise: promise)
        }

        func answer(_ parts: HTTPClientResponsePart...) throws {
            for part in parts { try channel.writeInbound(part) }
            channel.embeddedEventLoop.run()
        }

        static func head(_ status: HTTPResponseStatus, _ headers: HTTPHeaders = [:]) -> HTTPClientResponsePart {
            .head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))
        }

        static func body(_ count: Int) -> HTTPClientResponsePart {
            .body(ByteBuffer(repeating: 0x61, count: count))
        }
    }

    @Test("the request is written whole; the answer is read whole, status, headers and body")
    func wholeAnswer() throws {
        let exchange = try Exchange()
        #expect(try exchange.channel.readOutbound(as: HTTPClientRequestPart.self) != nil)
        #expect(
            try exchange.channel.readOutbound(as: HTTPClientRequestPart.self)
                == .body(.byteBuffer(ByteBuffer(bytes: [1, 2])))
        )
        #expect(try exchange.channel.readOutbound(as: HTTPClientRequestPart.self) == .end(nil))
        try exchange.answer(
            Exchange.head(.continue),
            Exchange.head(.ok, ["Retry-After": "3"]),
            Exchange.body(600),
            Exchange.body(424),
            .end(nil)
        )
        let answer = try #require(try exchange.result?.get())
        #expect(answer.status == 200)
        #expect(answer.headers.first(name: "Retry-After") == "3")
        #expect(answer.body.count == 1024)
        #expect(answer.keepAlive)
    }

    @Test("an answer that closes the connection is not kept alive")
    func connectionClose() throws {
        let exchange = try Exchange()
        try exchange.answer(Exchange.head(.serviceUnavailable, ["Connection": "close"]), .end(nil))
        #expect(try exchange.result?.get().keepAlive == false)
    }

    @Test("a body past the bound fails the request and closes the connection")
    func tooLarge() throws {
        let exchange = try Exchange(maxBytes: 1000)
        try exchange.answer(Exchange.head(.ok), Exchange.body(600), Exchange.body(401))
        #expect(throws: NIOTooManyBytesError.self) { try exchange.result?.get() }
        #expect(!exchange.channel.isActive)
    }

    @Test("a connection lost before the answer, and during it, say which")
    func connectionLost() throws {
        let before = try Exchange()
        try before.channel.close().wait()
        before.channel.embeddedEventLoop.run()
        #expect(throws: PinnedHTTPClient.Failure.connectionLost(answerStarted: false)) { try before.result?.get() }

        let during = try Exchange()
        try during.answer(Exchange.head(.ok), Exchange.body(10))
        try during.channel.close().wait()
        during.channel.embeddedEventLoop.run()
        #expect(throws: PinnedHTTPClient.Failure.connectionLost(answerStarted: true)) { try during.result?.get() }
    }

    @Test("a second request while one is in flight is refused, the first goes on")
    func oneAtATime() throws {
        let exchange = try Exchange()
        let second = exchange.channel.eventLoop.makePromise(of: Answer.self)
        var refused = false
        second.futureResult.assumeIsolated().whenFailure { _ in refused = true }
        exchange.handler.send(
            head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"),
            body: nil,
            maxBytes: 10,
            promise: second
        )
        exchange.channel.embeddedEventLoop.run()
        #expect(refused)
        try exchange.answer(Exchange.head(.ok), .end(nil))
        #expect(try exchange.result?.get().status == 200)
    }
}
