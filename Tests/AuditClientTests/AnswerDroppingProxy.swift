import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A unix-socket HTTP/1.1 proxy in front of the agent that forwards each request and, for the first `dropAnswers`
/// requests, throws the agent's answer away and closes the connection: the agent committed, the client never hears
/// it (a lost answer). Later requests get the answer (with `Connection: close`). At most `maxConnections`
/// connections; each served on a thread of its own (blocking I/O, 60 s socket timeouts).
final class AnswerDroppingProxy: Sendable {
    let path: String
    private let target: String
    private let listener: Int32
    private let remainingDrops: Mutex<Int>
    /// Requests forwarded whose answer was dropped, and those answered.
    let counts = Mutex<(dropped: Int, answered: Int)>((0, 0))

    struct Failure: Error { var description: String }

    init(path: String, target: String, dropAnswers: Int, maxConnections: Int = 16) throws {
        self.path = path
        self.target = target
        remainingDrops = Mutex(dropAnswers)
        unlink(path)
        listener = try Self.socket()
        var address = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw Failure(description: "cannot listen on \(path): errno \(errno)")
        }
        let proxy = self
        Thread {
            for _ in 0..<maxConnections {
                let client = accept(proxy.listener, nil, nil)
                guard client >= 0 else { return }
                Thread { proxy.serve(client) }.start()
            }
        }.start()
    }

    /// Stops accepting (the accept loop ends).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        Self.setTimeouts(client)
        guard let request = Self.readMessage(client) else { return }
        guard let upstream = try? Self.connect(target) else { return }
        defer { close(upstream) }
        Self.setTimeouts(upstream)
        guard Self.writeAll(upstream, request), var answer = Self.readMessage(upstream) else { return }
        let drop = remainingDrops.withLock { remaining in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        if drop {
            counts.withLock { $0.dropped += 1 }
            return
        }
        if let end = answer.firstRange(of: Array("\r\n".utf8)) {
            answer.insert(contentsOf: Array("\r\nConnection: close".utf8), at: end.lowerBound)
        }
        _ = Self.writeAll(client, answer)
        counts.withLock { $0.answered += 1 }
    }

    /// Reads one HTTP/1.1 message with a Content-Length body (or none).
    private static func readMessage(_ fd: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var expected: Int?
        while expected.map({ bytes.count < $0 }) ?? true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
            guard bytes.count < 4 << 20 else { return nil }
            if expected == nil, let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                expected = end.upperBound + length
            }
        }
        return bytes
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private static func socket() throws -> Int32 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        return fd
    }

    private static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure(description: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    private static func connect(_ path: String) throws -> Int32 {
        let fd = try socket()
        var address = try address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect \(path): errno \(errno)")
        }
        return fd
    }

    private static func setTimeouts(_ fd: Int32) {
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}
