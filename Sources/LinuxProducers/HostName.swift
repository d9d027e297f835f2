#if canImport(Glibc)
import Glibc
#endif

/// This host's name from `gethostname` (no resolver lookup, which Foundation's `hostName` may do: a login must
/// not wait on DNS).
public enum HostName: Sendable {
    /// The host name, or `localhost` when it cannot be read.
    public static var current: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let name = String(decoding: bytes, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }
}
