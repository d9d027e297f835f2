import HTTPTypes
import HummingbirdCore
import NIOCore
import Synchronization

/// The bytes a response's body writes, collected as a listener would send them.
enum ResponseBytes {
    /// Where the writer puts them.
    final class Box: Sendable {
        let bytes = Mutex<[UInt8]>([])
    }

    /// A writer that appends what it is given to a shared box.
    struct Collector: ResponseBodyWriter {
        let box: Box

        mutating func write(_ buffer: ByteBuffer) async throws {
            box.bytes.withLock { $0 += Array(buffer.readableBytesView) }
        }

        mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
            for buffer in buffers { try await write(buffer) }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    /// The body of `response`.
    static func of(_ response: Response) async throws -> [UInt8] {
        let box = Box()
        try await response.body.write(Collector(box: box))
        return box.bytes.withLock { $0 }
    }
}
