import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads a descriptor's lines on a thread of its own into an ``AsyncStream`` (at most `capacity` lines wait; past
/// it new lines are dropped and counted), so that the child writing them never waits on the watcher: a monitor that
/// stops reading is what the bus would drop. Closes the descriptor at end of file.
package enum LineReader {
    /// Lines dropped because the stream was full, across every reader of the process.
    static let dropped = Atomic<Int>(0)

    /// The lines of `fd` (without their newline); a line longer than `maxLineBytes` is skipped whole.
    package static func lines(of fd: Int32, capacity: Int, maxLineBytes: Int) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: [UInt8].self,
            bufferingPolicy: .bufferingOldest(capacity)
        )
        let thread = Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            var line: [UInt8] = []
            var skipping = false
            func emit(_ bytes: [UInt8]) {
                if case .dropped = continuation.yield(bytes) { dropped.add(1, ordering: .relaxed) }
            }
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                var start = 0
                for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                    if !skipping, line.count + index - start <= maxLineBytes {
                        line += chunk[start..<index]
                        emit(line)
                    }
                    line.removeAll(keepingCapacity: true)
                    skipping = false
                    start = index + 1
                }
                if !skipping {
                    if line.count + count - start > maxLineBytes {
                        skipping = true
                        line.removeAll(keepingCapacity: true)
                    } else {
                        line += chunk[start..<count]
                    }
                }
            }
            close(fd)
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
