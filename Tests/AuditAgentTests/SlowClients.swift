import AuditServerKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Connections that start a request and never finish it (slowloris), over POSIX sockets: each sends a request
/// line and one header line, and ``drip()`` sends one more header line on every connection. Closed on release.
final class SlowClients: @unchecked Sendable {
    enum Target: Sendable {
        /// Loopback TCP, each connection bound to one of `sources` in turn (127.0.0.0/8 is all loopback on Linux,
        /// so every source is a distinct peer to the server).
        case tcp(port: Int, sources: [String])
        case unix(String)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// The call was interrupted by a signal (EINTR) and may be retried.
        var interrupted = false
    }

    private let lock = NSLock()
    private var fds: [Int32] = []
    /// What ``received(_:)`` read so far, per connection.
    private var inbox: [Int: [UInt8]] = [:]

    /// How many slow connections this process can afford (each holds two files here: the client's and, while the
    /// server keeps it, the server's). Raises the soft open-file limit to the hard one first.
    static func affordable(_ wanted: Int) -> Int {
        _ = FileLimit.ensure(1 << 20)
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
        // Room for the servers' connections (at most a few hundred), the suite's other tests and their databases.
        let room = (Int(clamping: limit.rlim_cur) - 1500) / 2
        return max(1, min(wanted, room))
    }

    /// Opens `count` connections, each sending `head` (a request line and a header line, no blank line).
    static func open(
        _ count: Int,
        to target: Target,
        head: String = SlowClients.slowHead
    ) async throws -> SlowClients {
        let clients = SlowClients()
        try await clients.add(count, to: target, head: head)
        return clients
    }

    /// A request line and one header line.
    static let slowHead = "POST /v1/audit/events HTTP/1.1\r\nHost: slow\r\n"

    /// Opens `count` more connections, each sending `head`.
    func add(_ count: Int, to target: Target, head: String = SlowClients.slowHead) async throws {
        let first = self.count
        try await Self.onThread {
            for index in first..<(first + count) {
                let fd = try Self.connect(target, index: index)
                self.append(fd)
                _ = Self.send(fd, Array(head.utf8))
            }
        }
    }

    /// Sends one more header line on every connection still open (errors ignored: the server may have closed it).
    func drip() async {
        let fds = lock.withLock { self.fds }
        try? await Self.onThread {
            for fd in fds { _ = Self.send(fd, Array("X-Drip: 1\r\n".utf8)) }
        }
    }

    /// How many of the connections the server has closed (end of stream or reset seen). Reads and discards what
    /// the server sent (an answer on a keep-alive connection) to see past it.
    func closedByServer() -> Int {
        let fds = lock.withLock { self.fds }
        return fds.filter(Self.isClosed).count
    }

    /// Whether the `index`th connection opened was closed by the server.
    func isClosedByServer(_ index: Int) -> Bool {
        guard let fd = lock.withLock({ index < self.fds.count ? self.fds[index] : nil }) else { return false }
        return Self.isClosed(fd)
    }

    /// What the server sent on the `index`th connection so far, and whether it closed it: `reset` when the end was a
    /// reset (ECONNRESET), not an orderly end of stream.
    func received(_ index: Int) -> (text: String, closed: Bool, reset: Bool) {
        guard let fd = lock.withLock({ index < self.fds.count ? self.fds[index] : nil }) else {
            return ("", false, false)
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var closed = false
        var reset = false
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                lock.withLock { inbox[index, default: []] += buffer[0..<count] }
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                closed = true
                reset = count < 0 && errno == ECONNRESET
            }
            break
        }
        let bytes = lock.withLock { inbox[index] ?? [] }
        return (String(decoding: bytes, as: UTF8.self), closed, reset)
    }

    private static func isClosed(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }
            if count == 0 { return true }
            return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
        }
    }

    var count: Int { lock.withLock { fds.count } }

    /// Closes every connection.
    func closeAll() {
        let fds = lock.withLock {
            defer { self.fds = [] }
            return self.fds
        }
        for fd in fds { close(fd) }
    }

    deinit { closeAll() }

    private func append(_ fd: Int32) { lock.withLock { fds.append(fd) } }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// ``connectOnce(_:index:)``, again after an interruption by a signal (EINTR: the test process's children end
    /// while thousands of connections are opened), a few times.
    private static func connect(_ target: Target, index: Int) throws -> Int32 {
        var attempt = 0
        while true {
            do {
                return try connectOnce(target, index: index)
            } catch let failure as Failure where failure.interrupted && attempt < 5 {
                attempt += 1
            }
        }
    }

    private static func connectOnce(_ target: Target, index: Int) throws -> Int32 {
        switch target {
        case .tcp(let port, let sources):
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
            var source = sockaddr_in()
            source.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, sources[index % sources.count], &source.sin_addr)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            let bound = withUnsafePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, connected == 0 else {
                let error = errno
                close(fd)
                throw Failure(
                    description: "connect #\(index) from \(sources[index % sources.count]): errno \(error)",
                    interrupted: error == EINTR
                )
            }
            return fd
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (offset, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[offset] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard connected == 0 else {
                let error = errno
                close(fd)
                throw Failure(description: "connect #\(index) to \(path): errno \(error)", interrupted: error == EINTR)
            }
            return fd
        }
    }

    /// Runs blocking socket work on a thread of its own, off the concurrency pool the servers answer on.
    static func onThread(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes; answers whether it held. The default cap,
/// minutes, ends only a wait for something that never comes: how fast it comes is the bench's business.
func pollUntil(
    within timeout: Duration = .seconds(300),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
