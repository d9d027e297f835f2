import AuditChain
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A unix-socket HTTP/1.1 proxy in front of the agent whose script decides, for each request (numbered from 0, with
/// its body), what happens: forwarded to the agent and answered, forwarded and the answer thrown away (the agent
/// committed, the client never hears it: a lost answer), or answered by the proxy itself with any status and body (an
/// agent that answers what the protocol does not define). Every answer carries `Connection: close`. At most
/// `maxConnections` connections (one request each); each served on a thread of its own (blocking I/O, 60 s socket
/// timeouts).
final class AgentProxy: Sendable {
    /// What the proxy does with a request.
    enum Action: Sendable {
        /// Forwards it to the agent and passes the answer on.
        case forward
        /// Forwards it to the agent and closes the connection without an answer.
        case dropAnswer
        /// Answers `status` with `body` itself; the agent never sees the request.
        case answer(status: Int, body: String)
    }

    let path: String
    private let target: String
    private let listener: Int32
    private let script: @Sendable (_ index: Int, _ body: [UInt8]) -> Action
    /// The bodies of the requests received, in order.
    let requests = Mutex<[[UInt8]]>([])
    /// Requests forwarded whose answer was dropped, and those answered.
    let counts = Mutex<(dropped: Int, answered: Int)>((0, 0))

    struct Failure: Error { var description: String }

    /// A proxy that drops the agent's answer to the first `dropAnswers` requests and forwards the rest.
    convenience init(path: String, target: String, dropAnswers: Int) throws {
        try self.init(path: path, target: target) { index, _ in index < dropAnswers ? .dropAnswer : .forward }
    }

    init(
        path: String,
        target: String,
        maxConnections: Int = 64,
        script: @escaping @Sendable (_ index: Int, _ body: [UInt8]) -> Action
    ) throws {
        self.path = path
        self.target = target
        self.script = script
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

    /// The events of request `index`, as JSON objects, one per line of its body.
    func events(ofRequest index: Int) -> [[String: JSONValue]] {
        let body = requests.withLock { $0.indices.contains(index) ? $0[index] : [] }
        return body.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONValue(parsing: Array($0)).objectValue }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        Self.setTimeouts(client)
        guard let request = Self.readMessage(client) else { return }
        let body = request.firstRange(of: Array("\r\n\r\n".utf8)).map { Array(request[$0.upperBound...]) } ?? []
        let index = requests.withLock { requests in
            requests.append(body)
            return requests.count - 1
        }
        let action = script(index, body)
        var answer: [UInt8]
        switch action {
        case .answer(let status, let text):
            let content = Array(text.utf8)
            let head =
                "HTTP/1.1 \(status) Scripted\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(content.count)\r\n\r\n"
            answer = Array(head.utf8) + content
        case .forward, .dropAnswer:
            guard let upstream = try? Self.connect(target) else { return }
            defer { close(upstream) }
            Self.setTimeouts(upstream)
            guard Self.writeAll(upstream, request), let forwarded = Self.readMessage(upstream) else { return }
            if case .dropAnswer = action {
                counts.withLock { $0.dropped += 1 }
                return
            }
            answer = forwarded
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
