/// A private file holding a key's seed (the collector's receipt key, the witness's cosigning key): mode 0600,
/// created exclusively with a fresh key when missing; a file that group or others can read is refused, as ssh does.
public enum SeedFile: Sendable {
    /// The largest seed file read.
    public static let maxBytes = 4096

    /// Loads the key at `path`, creating a fresh one (mode 0600, exclusively, synced) if the file does not exist.
    /// When another process creates it first, that key is returned.
    /// - Parameters:
    ///   - what: the file's role in messages, e.g. `"collector key file"`.
    ///   - generate: a fresh key and the seed bytes to write for it.
    ///   - parse: the key a file's bytes hold, or nil if they hold none.
    /// - Throws: ``SecretFile/Failure``: unsafe, unreadable, not a key (``SecretFile/Failure/Kind/invalid``), or
    ///   not written (``SecretFile/Failure/Kind/unreadable``, saying `cannot create key file`).
    public static func loadOrCreate<Key>(
        path: String,
        what: String,
        generate: () -> (key: Key, seed: [UInt8]),
        parse: ([UInt8]) -> Key?
    ) throws(SecretFile.Failure) -> Key {
        if let key = try load(path: path, what: what, parse: parse) { return key }
        let fresh = generate()
        do {
            try PrivateFile.create(path, bytes: fresh.seed)
        } catch .exists {
            if let raced = try load(path: path, what: what, parse: parse) { return raced }
            throw SecretFile.Failure(.unreadable, "cannot create key file \(path): it appeared and vanished")
        } catch {
            throw SecretFile.Failure(.unreadable, "cannot create key file \(path): \(error)")
        }
        return fresh.key
    }

    /// Loads the key at `path`; nil if there is no such file.
    /// - Throws: ``SecretFile/Failure`` if the file is unsafe or unreadable, or ``SecretFile/Failure/Kind/invalid``
    ///   saying `<path> is not a 32-byte Ed25519 seed (<n> bytes)` when `parse` finds no key in it.
    public static func load<Key>(
        path: String,
        what: String,
        parse: ([UInt8]) -> Key?
    ) throws(SecretFile.Failure) -> Key? {
        guard let bytes = try SecretFile.readIfPresent(path, what: what, maxBytes: maxBytes) else { return nil }
        guard let key = parse(bytes) else {
            throw SecretFile.Failure(.invalid, "\(path) is not a 32-byte Ed25519 seed (\(bytes.count) bytes)")
        }
        return key
    }
}
