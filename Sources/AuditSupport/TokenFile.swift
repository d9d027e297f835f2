import Foundation

/// Reads a bearer token file, refusing one that group or others can read (as key files are refused). The agent
/// reads its backend token this way (`--token-file`), the collector the tokens it requires (`--token-file`,
/// `--read-token-file`), and `auditctl` the token it presents to a collector (`--token-file`).
public enum TokenFile: Sendable {
    /// The largest token file read.
    public static let maxBytes = 64 * 1024

    /// The token: the file's content without surrounding white space.
    /// - Throws: ``SecretFile/Failure`` if the file is missing, accessible by group or others, not a regular file,
    ///   unreadable, or does not hold exactly one non-empty line (``SecretFile/Failure/Kind/invalid``).
    public static func read(_ path: String) throws(SecretFile.Failure) -> String {
        let bytes = try SecretFile.read(path, what: "token file", maxBytes: maxBytes)
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw SecretFile.Failure(.invalid, "token file \(path) must hold one non-empty line")
        }
        return token
    }
}
