import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Free TCP ports on 127.0.0.1 for children that take a fixed `--listen` address.
package enum LoopbackPort {
    /// Why no port could be had.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// A free loopback port, none of `taken`: bound to port 0 and released, so the child should bind it right after
    /// (another process may take it in between).
    /// - Throws: ``Failure`` when no socket can be bound, or every port the kernel offers is in `taken`.
    package static func free(besides taken: Set<Int> = []) throws -> Int {
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let port = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int in
                    guard bind(fd, raw, length) == 0, getsockname(fd, raw, &length) == 0 else { return 0 }
                    return Int(UInt16(bigEndian: pointer.pointee.sin_port))
                }
            }
            guard port > 0 else { throw Failure(description: "no free loopback port: errno \(errno)") }
            if !taken.contains(port) { return port }
        }
        throw Failure(description: "no free loopback port besides \(taken.count) taken ones in 100 tries")
    }
}
