public import HummingbirdCore
public import HTTPTypes
import NIOCore

/// A request's body read whole up to a bound: refused before any byte is read when its `Content-Length` says it is
/// larger, and as soon as it passes the bound otherwise (the collector's and the witness's listeners).
public enum BoundedBody: Sendable {
    /// Why the body was not read.
    public enum Refusal: Error, Sendable, Equatable {
        /// Larger than `limit` bytes; `declared` is its `Content-Length` when that said so.
        case tooLarge(declared: Int?, limit: Int)
        /// The body could not be read (the connection failed or closed).
        case unreadable

        /// The status to answer: 413 or 400.
        public var status: HTTPResponse.Status {
            switch self {
            case .tooLarge: .contentTooLarge
            case .unreadable: .badRequest
            }
        }

        /// What to tell the client.
        public var message: String {
            switch self {
            case .tooLarge(let declared?, let limit): "the body is \(declared) bytes, at most \(limit)"
            case .tooLarge(nil, let limit): "the body is larger than \(limit) bytes"
            case .unreadable: "cannot read the body"
            }
        }
    }

    /// The body of `request`, at most `maxBytes` bytes.
    /// - Throws: ``Refusal``.
    public static func read(_ request: Request, maxBytes: Int) async throws(Refusal) -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes {
            throw .tooLarge(declared: length, limit: maxBytes)
        }
        do {
            return Array(try await request.body.collect(upTo: maxBytes).readableBytesView)
        } catch is NIOTooManyBytesError {
            throw .tooLarge(declared: nil, limit: maxBytes)
        } catch {
            throw .unreadable
        }
    }
}
