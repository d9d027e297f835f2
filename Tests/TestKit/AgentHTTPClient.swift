import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A tiny blocking HTTP/1.1 client over POSIX sockets (unix or loopback TCP) for the agent's and the collector's
/// tests (it follows no redirect and keeps no cookie: the collector's sign-in tests see each answer as it is), run on
/// a thread of its own so it never
/// blocks the concurrency pool. One request per connection (`Connection: close`), 120 s socket timeouts: the agent
/// answers on the test process's concurrency pool, two threads shared with every other test of the run, and a clean
/// CI run once kept an answer waiting past an earlier 30 s limit while the bit-flip sweeps and crash tests held both
/// cores (every test that ran beside it took 85–95 s).
package struct AgentHTTPClient: Sendable {
    package enum Target: Sendable {
        case unix(String)
        case tcp(Int)
    }

    package struct Reply: Sendable {
        package var status: Int
        package var headers: [String: String]
        package var body: [UInt8]

        package var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        package var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let target: Target

    package init(target: Target) {
        self.target = target
    }

    /// The send and receive timeout of each socket operation.
    static let timeoutSeconds = 120

    package func post(_ path: String, _ body: String) async throws -> Reply {
        try await send("POST", path, body: Array(body.utf8))
    }

    package func get(_ path: String, headers: [String: String] = [:]) async throws -> Reply {
        try await send("GET", path, headers: headers)
    }

    /// Sends one request; `headers` are added as given (a `Content-Type` among them replaces the JSON default of a
    /// request with a body).
    package func send(
        _ method: String,
        _ path: String,
        body: [UInt8] = [],
        headers: [String: String] = [:]
    ) async throws -> Reply {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if !body.isEmpty || method == "POST" {
            if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
                head += "Content-Type: application/json\r\n"
            }
            head += "Content-Length: \(body.count)\r\n"
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        let target = target
        // A thread of its own: blocked in recv on Dispatch's shared pool, it would hold a thread the server's tasks
        // (which share that pool on Linux) may need to answer.
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try Self.exchange(request, target: target) })
            }.start()
        }
    }

    private static func exchange(_ request: [UInt8], target: Target) throws -> Reply {
        let fd = try connect(target)
        defer { close(fd) }
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            // The server may answer (413) and close before reading the whole body: stop writing, read the answer.
            if count <= 0 { break }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw Failure(
                    description: "no answer within \(timeoutSeconds) s (\(response.count) bytes of the response so far)"
                )
            }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        return try parse(response)
    }

    private static func connect(_ target: Target) throws -> Int32 {
        let fd: Int32
        switch target {
        case .unix: fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        case .tcp: fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        }
        guard fd >= 0 else { throw Failure(description: "socket() failed: \(errno)") }
        var timeout = timeval(tv_sec: Int(timeoutSeconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        switch target {
        case .unix(let path):
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        case .tcp(let port):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect failed: errno \(errno)")
        }
        return fd
    }

    private static func parse(_ response: [UInt8]) throws -> Reply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = response.firstRange(of: separator) else {
            throw Failure(description: "no complete response head (\(response.count) bytes)")
        }
        let head = String(decoding: response[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(head[0])")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        var body = Array(response[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            body = try dechunk(body)
        } else if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = Array(body.prefix(length))
        }
        return Reply(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var rest = bytes[...]
        while let lineEnd = rest.firstRange(of: Array("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else {
                throw Failure(description: "bad chunk size \(sizeText)")
            }
            if size == 0 { break }
            let start = lineEnd.upperBound
            out += rest[start..<start + size]
            rest = rest[(start + size + 2)...]
        }
        return out
    }
}
