public import Crypto
import AuditWire

/// The witness's Ed25519 cosigning key: a file holding the 32-byte seed, mode 0600, as the collector keeps its
/// receipt key. Created exclusively when missing; a file that group or others can read is refused, as ssh does.
public enum WitnessKeyFile: Sendable {
    /// Loads the key at `path`, creating a fresh one (mode 0600) if the file does not exist.
    /// - Throws: ``WitnessError`` if the file is readable by group or others, is not a key, or cannot be written.
    public static func loadOrCreate(path: String) throws(WitnessError) -> Curve25519.Signing.PrivateKey {
        if let key = try load(path: path) { return key }
        let key = Curve25519.Signing.PrivateKey()
        do {
            try PrivateFile.create(path, bytes: Array(key.rawRepresentation))
        } catch .exists {
            if let raced = try load(path: path) { return raced }
            throw WitnessError(.storage, "cannot create key file \(path): it appeared and vanished")
        } catch {
            throw WitnessError(.storage, "cannot create key file \(path): \(error)")
        }
        return key
    }

    /// Loads the key at `path`; nil if there is no such file.
    /// - Throws: ``WitnessError`` if the file is readable by group or others or is not a 32-byte seed.
    public static func load(path: String) throws(WitnessError) -> Curve25519.Signing.PrivateKey? {
        let data: [UInt8]
        do {
            guard let bytes = try PrivateFile.read(path, maxBytes: 4096) else { return nil }
            data = bytes
        } catch .unsafe(let mode) {
            throw WitnessError(
                .unsafeKeyPermissions,
                "witness key file \(path) " + PrivateFile.unsafeAdvice(path, mode: mode)
            )
        } catch {
            throw WitnessError(.storage, "cannot read witness key file \(path): \(error)")
        }
        guard data.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: data) else {
            throw WitnessError(.invalidKey, "\(path) is not a 32-byte Ed25519 seed (\(data.count) bytes)")
        }
        return key
    }
}
