public import AuditChain
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The collector's Ed25519 receipt key: a file holding the 32-byte seed, mode 0600.
///
/// Created exclusively (`O_EXCL`) when missing; like ssh, a file that group or others can read is refused.
public enum CollectorKeyFile {
    /// The default key path for a database: `<db>.collector.key`.
    public static func defaultPath(database: String) -> String { database + ".collector.key" }

    /// Loads the key at `path`, creating a fresh one (mode 0600) if the file does not exist.
    /// - Throws: ``CollectorError`` if the file is readable by group or others, is not a key, or cannot be written.
    public static func loadOrCreate(path: String) throws(CollectorError) -> SigningKey {
        if let key = try load(path: path) { return key }
        let key = SigningKey.generate()
        let seed = Array(key.privateKey.rawRepresentation)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST, let raced = try load(path: path) { return raced }
            throw CollectorError(.storage, "cannot create key file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let written = seed.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == seed.count, fsync(fd) == 0 else {
            throw CollectorError(.storage, "cannot write key file \(path): \(String(cString: strerror(errno)))")
        }
        return key
    }

    /// Loads the key at `path`; nil if there is no such file.
    /// - Throws: ``CollectorError`` if the file is readable by group or others or is not a 32-byte seed.
    public static func load(path: String) throws(CollectorError) -> SigningKey? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if info.st_mode & 0o077 != 0 {
            throw CollectorError(
                .unsafeKeyPermissions,
                "collector key file \(path) is accessible by group or others "
                    + "(mode \(String(info.st_mode & 0o777, radix: 8))); it must be private: run `chmod 600 \(path)`"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CollectorError(.storage, "cannot read collector key file \(path)")
        }
        do {
            return try SigningKey(rawRepresentation: Array(data))
        } catch {
            throw CollectorError(.invalidKey, "\(path) is not a 32-byte Ed25519 seed (\(data.count) bytes)")
        }
    }
}
