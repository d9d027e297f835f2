import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Checks on the unix ingest socket's path before binding (binding replaces a stale socket file).
enum SocketFile {
    /// Refuses a path that is not a socket, or a socket another process still accepts connections on.
    /// - Throws: ``AgentError`` (``AgentError/Code/cannotListen``).
    static func checkFree(_ path: String) throws(AgentError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw AgentError(.cannotListen, "\(path) exists and is not a socket; remove it or choose --socket PATH")
        }
        if isLive(path) {
            throw AgentError(
                .cannotListen,
                "another process is listening on \(path) (is an agent already running on this state directory?)"
            )
        }
    }

    /// Whether a connection to the socket succeeds.
    static func isLive(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
        }
    }
}
