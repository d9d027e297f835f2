import AuditServerKit
import HTTPTypes
import HummingbirdCore
import NIOCore
import Testing

@Suite struct BoundedBodyTests {
    static func request(_ body: [UInt8], declaredLength: Int? = nil) -> Request {
        var fields = HTTPFields()
        if let declaredLength { fields[.contentLength] = String(declaredLength) }
        let head = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1", path: "/", headerFields: fields)
        return Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body)))
    }

    @Test("a body within the bound is read whole, an empty one too")
    func within() async throws {
        #expect(try await BoundedBody.read(Self.request([1, 2, 3], declaredLength: 3), maxBytes: 3) == [1, 2, 3])
        #expect(try await BoundedBody.read(Self.request([]), maxBytes: 3) == [])
    }

    @Test("a declared length past the bound is refused before reading, saying the length; a longer body by counting")
    func tooLarge() async throws {
        await #expect(throws: BoundedBody.Refusal.tooLarge(declared: 10, limit: 4)) {
            try await BoundedBody.read(Self.request([1], declaredLength: 10), maxBytes: 4)
        }
        await #expect(throws: BoundedBody.Refusal.tooLarge(declared: nil, limit: 4)) {
            try await BoundedBody.read(Self.request([1, 2, 3, 4, 5]), maxBytes: 4)
        }
        #expect(BoundedBody.Refusal.tooLarge(declared: 10, limit: 4).message == "the body is 10 bytes, at most 4")
        #expect(BoundedBody.Refusal.tooLarge(declared: nil, limit: 4).message == "the body is larger than 4 bytes")
        #expect(BoundedBody.Refusal.tooLarge(declared: nil, limit: 4).status == .contentTooLarge)
        #expect(BoundedBody.Refusal.unreadable.status == .badRequest)
        #expect(BoundedBody.Refusal.unreadable.message == "cannot read the body")
    }

    @Test("a hostile Content-Length (negative, not a number) is not trusted: the body is counted")
    func hostileLength() async throws {
        var fields = HTTPFields()
        fields[.contentLength] = "-5"
        let head = HTTPRequest(method: .post, scheme: "http", authority: "h", path: "/", headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: [1, 2])))
        #expect(try await BoundedBody.read(request, maxBytes: 4) == [1, 2])
        await #expect(throws: BoundedBody.Refusal.tooLarge(declared: nil, limit: 1)) {
            try await BoundedBody.read(Self.request([1, 2], declaredLength: nil), maxBytes: 1)
        }
    }
}
