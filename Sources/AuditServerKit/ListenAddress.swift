/// A TCP address to listen on, `HOST:PORT` (`[::1]:PORT` for IPv6; port 0 picks a free port).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The port; 0 for any free port.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Why a text is not an address.
    public enum Problem: Error, Sendable, Equatable {
        /// Not `HOST:PORT` with a port from 0 to 65535.
        case notHostPort
        /// `:PORT` without a host.
        case noHost(port: Int)

        /// The problem in words, for the flag or setting `name`.
        public func message(_ name: String, text: String) -> String {
            switch self {
            case .notHostPort: return "\(name) must be HOST:PORT (e.g. 127.0.0.1:8470), got \"\(text)\""
            case .noHost(let port): return "\(name) needs a host, e.g. 127.0.0.1:\(port); got \"\(text)\""
            }
        }
    }

    /// Parses `HOST:PORT` (`[::1]:PORT` for IPv6), the one parser of the agent's and the collector's listen flags.
    /// - Throws: ``Problem``.
    public init(parsing text: String) throws(Problem) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw .notHostPort }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw .noHost(port: port) }
        self.init(host: host, port: port)
    }

    /// Whether the host is a loopback address (`127.0.0.0/8`, `::1`, `localhost`).
    public var isLoopback: Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let parts = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
