import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Blocking POSIX socket helpers for ``FaultProxy``: loopback listen and connect, whole writes, HTTP/1.1 messages.
package enum SyncFaultSocket {
    /// An HTTP/1.1 message as the proxy sees it: the head (start line and headers) and the body.
    struct Message {
        /// Start line.
        var startLine: String
        /// Header lines in order, as (name, value).
        var headers: [(String, String)]
        /// The body (de-chunked bodies are kept as received).
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }

        /// The message serialized with `Connection: close` and without `Expect` (the proxy closes after one
        /// exchange and answers `100 Continue` itself).
        var bytesForwarded: [UInt8] {
            var text = startLine + "\r\n"
            for (name, value) in headers {
                let lower = name.lowercased()
                if lower == "connection" || lower == "expect" || lower == "keep-alive" { continue }
                text += "\(name): \(value)\r\n"
            }
            text += "Connection: close\r\n\r\n"
            return Array(text.utf8) + body
        }
    }

    static func fail(_ what: String) -> any Error {
        NSError(
            domain: "FaultProxy",
            code: Int(errno),
            userInfo: [NSLocalizedDescriptionKey: "\(what): errno \(errno)"]
        )
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    /// A non-blocking listening socket on 127.0.0.1:`port` (0: any free port) and its bound port.
    package static func listen(port: UInt16) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw fail("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let error = fail("bind/listen 127.0.0.1:\(port)")
            close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A blocking connection to 127.0.0.1:`port`.
    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw fail("socket") }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = fail("connect 127.0.0.1:\(port)")
            close(fd)
            throw error
        }
        setReceiveTimeout(fd, seconds: 30)
        return fd
    }

    /// Bounds every blocking read (a safety net: shutdown wakes readers first).
    static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`; false when the peer is gone.
    @discardableResult
    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Closes with an RST instead of a FIN (SO_LINGER 0).
    static func reset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Reads one HTTP/1.1 message: head, then a Content-Length body, a chunked body, or (responses only) to EOF.
    /// - Parameter onHead: called with the head before the body is read (to answer `Expect: 100-continue`).
    static func readMessage(
        _ fd: Int32,
        isResponse: Bool,
        onHead: (Message) -> Void = { _ in }
    ) -> Message? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { return fill() }
            guard count > 0 else { return false }
            buffer += chunk[0..<count]
            return true
        }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard fill() else { return nil }
            headEnd = find(separator, in: buffer)
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: buffer[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        var message = Message(startLine: lines.first ?? "", headers: [], body: [])
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            message.headers.append((String(line[..<colon]), value))
        }
        onHead(message)
        var body = Array(buffer[(headEnd + 4)...])
        if let length = message.header("Content-Length").flatMap(Int.init) {
            while body.count < length {
                buffer = []
                guard fill() else { return nil }
                body += buffer
            }
            message.body = Array(body.prefix(length))
        } else if message.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            let end: [UInt8] = Array("0\r\n\r\n".utf8)
            while !body.suffix(end.count).elementsEqual(end) {
                buffer = []
                guard fill() else { return nil }
                body += buffer
            }
            message.body = body
        } else if isResponse {
            buffer = []
            while fill() {}
            message.body = body + buffer
        }
        return message
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// Occurrences of `needle` in `haystack`.
    static func count(_ needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard haystack.count >= needle.count else { return 0 }
        var found = 0
        var start = 0
        while start <= haystack.count - needle.count {
            if haystack[start] == needle[0], haystack[start..<(start + needle.count)].elementsEqual(needle) {
                found += 1
                start += needle.count
            } else {
                start += 1
            }
        }
        return found
    }
}
