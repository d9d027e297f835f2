public import AuditChain
import AuditWire
import Crypto

/// The collector's Ed25519 receipt key: a file holding the 32-byte seed, mode 0600.
///
/// Created exclusively (`O_EXCL`) when missing; like ssh, a file that group or others can read is refused.
public enum CollectorKeyFile: Sendable {
    /// The default key path for a database: `<db>.collector.key`.
    public static func defaultPath(database: String) -> String { database + ".collector.key" }

    /// Loads the key at `path`, creating a fresh one (mode 0600) if the file does not exist.
    /// - Throws: ``CollectorError`` if the file is readable by group or others, is not a key, or cannot be written.
    public static func loadOrCreate(path: String) throws(CollectorError) -> SigningKey {
        if let key = try load(path: path) { return key }
        let key = SigningKey.generate()
        do {
            try PrivateFile.create(path, bytes: Array(key.privateKey.rawRepresentation))
        } catch .exists {
            if let raced = try load(path: path) { return raced }
            throw CollectorError(.storage, "cannot create key file \(path): it appeared and vanished")
        } catch {
            throw CollectorError(.storage, "cannot create key file \(path): \(error)")
        }
        return key
    }

    /// Loads the key at `path`; nil if there is no such file.
    /// - Throws: ``CollectorError`` if the file is readable by group or others or is not a 32-byte seed.
    public static func load(path: String) throws(CollectorError) -> SigningKey? {
        let data: [UInt8]
        do {
            guard let bytes = try PrivateFile.read(path, maxBytes: 4096) else { return nil }
            data = bytes
        } catch .unsafe(let mode) {
            throw CollectorError(
                .unsafeKeyPermissions,
                "collector key file \(path) " + PrivateFile.unsafeAdvice(path, mode: mode)
            )
        } catch {
            throw CollectorError(.storage, "cannot read collector key file \(path): \(error)")
        }
        do {
            return try SigningKey(rawRepresentation: data)
        } catch {
            throw CollectorError(.invalidKey, "\(path) is not a 32-byte Ed25519 seed (\(data.count) bytes)")
        }
    }
}
