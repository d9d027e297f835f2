import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a bearer token file, refusing one that group or others can read (as key files are refused).
enum TokenFile {
    /// The token: the file's content without surrounding white space.
    /// - Throws: ``AgentError`` (``AgentError/Code/unsafeTokenFile``) if the file is missing, accessible by group
    ///   or others, or empty.
    static func read(_ path: String) throws(AgentError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw AgentError(.unsafeTokenFile, "cannot open token file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw AgentError(.unsafeTokenFile, "token file \(path) is not a regular file")
        }
        if info.st_mode & 0o077 != 0 {
            throw AgentError(
                .unsafeTokenFile,
                "token file \(path) is accessible by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "it must be private: run `chmod 600 \(path)`"
            )
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 64 * 1024 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw AgentError(
                    .unsafeTokenFile,
                    "cannot read token file \(path): \(String(cString: strerror(errno)))"
                )
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw AgentError(.unsafeTokenFile, "token file \(path) must hold one non-empty line")
        }
        return token
    }
}
