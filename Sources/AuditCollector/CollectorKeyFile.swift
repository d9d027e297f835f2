public import AuditChain
import AuditSupport
import Crypto

/// The collector's Ed25519 receipt key: a file holding the 32-byte seed, mode 0600 (``SeedFile``).
///
/// Created exclusively (`O_EXCL`) when missing; like ssh, a file that group or others can read is refused.
public enum CollectorKeyFile: Sendable {
    /// The default key path for a database: `<db>.collector.key`.
    public static func defaultPath(database: String) -> String { database + ".collector.key" }

    /// Loads the key at `path`, creating a fresh one (mode 0600) if the file does not exist.
    /// - Throws: ``CollectorError`` if the file is readable by group or others, is not a key, or cannot be written.
    public static func loadOrCreate(path: String) throws(CollectorError) -> SigningKey {
        do {
            return try SeedFile.loadOrCreate(
                path: path,
                what: "collector key file",
                generate: {
                    let key = SigningKey.generate()
                    return (key, Array(key.privateKey.rawRepresentation))
                },
                parse: { try? SigningKey(rawRepresentation: $0) }
            )
        } catch {
            throw Self.error(error)
        }
    }

    /// Loads the key at `path`; nil if there is no such file.
    /// - Throws: ``CollectorError`` if the file is readable by group or others or is not a 32-byte seed.
    public static func load(path: String) throws(CollectorError) -> SigningKey? {
        do {
            return try SeedFile.load(path: path, what: "collector key file") { try? SigningKey(rawRepresentation: $0) }
        } catch {
            throw Self.error(error)
        }
    }

    /// The collector's error for a refused seed file.
    private static func error(_ failure: SecretFile.Failure) -> CollectorError {
        switch failure.kind {
        case .unsafe: CollectorError(.unsafeKeyPermissions, failure.description)
        case .invalid: CollectorError(.invalidKey, failure.description)
        case .missing, .notRegular, .unreadable: CollectorError(.storage, failure.description)
        }
    }
}
