public import Crypto
import AuditSupport

/// The witness's Ed25519 cosigning key: a file holding the 32-byte seed, mode 0600, as the collector keeps its
/// receipt key (``SeedFile``). Created exclusively when missing; a file that group or others can read is refused, as
/// ssh does.
public enum WitnessKeyFile: Sendable {
    /// Loads the key at `path`, creating a fresh one (mode 0600) if the file does not exist.
    /// - Throws: ``WitnessError`` if the file is readable by group or others, is not a key, or cannot be written.
    public static func loadOrCreate(path: String) throws(WitnessError) -> Curve25519.Signing.PrivateKey {
        do {
            return try SeedFile.loadOrCreate(
                path: path,
                what: "witness key file",
                generate: {
                    let key = Curve25519.Signing.PrivateKey()
                    return (key, Array(key.rawRepresentation))
                },
                parse: Self.key(seed:)
            )
        } catch {
            throw Self.error(error)
        }
    }

    /// Loads the key at `path`; nil if there is no such file.
    /// - Throws: ``WitnessError`` if the file is readable by group or others or is not a 32-byte seed.
    public static func load(path: String) throws(WitnessError) -> Curve25519.Signing.PrivateKey? {
        do {
            return try SeedFile.load(path: path, what: "witness key file", parse: Self.key(seed:))
        } catch {
            throw Self.error(error)
        }
    }

    /// The key of a 32-byte seed.
    private static func key(seed: [UInt8]) -> Curve25519.Signing.PrivateKey? {
        seed.count == 32 ? try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) : nil
    }

    /// The witness's error for a refused seed file.
    private static func error(_ failure: SecretFile.Failure) -> WitnessError {
        switch failure.kind {
        case .unsafe: WitnessError(.unsafeKeyPermissions, failure.description)
        case .invalid: WitnessError(.invalidKey, failure.description)
        case .missing, .notRegular, .unreadable: WitnessError(.storage, failure.description)
        }
    }
}
