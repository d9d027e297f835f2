public import AuditChain
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
import AuditSupport
#endif

/// The device's key files: Ed25519 signing keys and AES-256 data keys, 32 raw bytes each, mode 0600.
///
/// Files are named `signing-<keyid>.key` and `data-<keyid>.key`. They are read from `$CREDENTIALS_DIRECTORY`
/// (systemd credentials) first when that is set, then from the state directory's `keys/`. Like ssh, the
/// programs refuse a key file that group or others can read, and say how to fix it.
public struct KeyStore: Sendable {
    /// Where new keys are written: `<state>/keys`.
    public let directory: String
    /// systemd's credentials directory, searched first.
    public let credentialsDirectory: String?

    /// Creates a key store.
    /// - Parameters:
    ///   - directory: where key files are written and read.
    ///   - credentialsDirectory: searched first when reading (systemd's `$CREDENTIALS_DIRECTORY`).
    public init(directory: String, credentialsDirectory: String?) {
        self.directory = directory
        self.credentialsDirectory = credentialsDirectory
    }

    /// The key store of a state directory, with `$CREDENTIALS_DIRECTORY` searched first when it is set.
    public init(state: StateDirectory) {
        self.init(
            directory: state.keysPath,
            credentialsDirectory: ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]
        )
    }

    static func signingFileName(_ id: KeyID) -> String { "signing-\(id.hex).key" }
    static func dataFileName(_ id: KeyID) -> String { "data-\(id.hex).key" }

    /// Writes a new signing key file (mode 0600, created exclusively, synced).
    public func write(_ key: SigningKey) throws {
        try writeKeyFile(Self.signingFileName(key.id), bytes: Array(key.privateKey.rawRepresentation))
    }

    /// Writes a new data key file (mode 0600, created exclusively, synced).
    public func write(_ key: DataKey) throws {
        try writeKeyFile(Self.dataFileName(key.id), bytes: key.rawRepresentation)
    }

    /// Removes the key files of a signing key and a data key that this process wrote and no log entry names (an
    /// `init` that lost a race): only from ``directory``, never from the credentials directory. Best effort: a file
    /// that cannot be removed stays, unused.
    func removeUnused(signing: KeyID, data: KeyID) {
        for name in [Self.signingFileName(signing), Self.dataFileName(data)] {
            _ = unlink(directory + "/" + name)
        }
        Self.syncDirectory(directory)
    }

    /// Loads the signing key with this id.
    /// - Throws: ``LogStoreError`` if the file is missing, unsafe, or holds another key.
    public func signingKey(id: KeyID) throws -> SigningKey {
        let (path, bytes) = try readKeyFile(Self.signingFileName(id))
        let key: SigningKey
        do {
            key = try SigningKey(rawRepresentation: bytes)
        } catch {
            throw LogStoreError(.invalidKey, "\(path) is not a 32-byte Ed25519 key")
        }
        guard key.id == id else { throw LogStoreError(.invalidKey, "\(path) holds key \(key.id), not \(id)") }
        return key
    }

    /// Loads the data key with this id.
    /// - Throws: ``LogStoreError`` if the file is missing, unsafe, or holds another key.
    public func dataKey(id: KeyID) throws -> DataKey {
        let (path, bytes) = try readKeyFile(Self.dataFileName(id))
        let key: DataKey
        do {
            key = try DataKey(rawRepresentation: bytes)
        } catch {
            throw LogStoreError(.invalidKey, "\(path) is not a 32-byte AES-256 key")
        }
        guard key.id == id else { throw LogStoreError(.invalidKey, "\(path) holds key \(key.id), not \(id)") }
        return key
    }

    /// Every data key present (old keys stay, to read old entries).
    public func allDataKeys() throws -> [DataKey] {
        try keyIds(prefix: "data-").map(dataKey(id:))
    }

    /// Every data key present, by id (what opening entries needs).
    public func dataKeysById() throws -> [KeyID: DataKey] {
        Dictionary(try allDataKeys().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Every signing key present (the genesis key and each rotated-in key).
    public func allSigningKeys() throws -> [SigningKey] {
        try keyIds(prefix: "signing-").map(signingKey(id:))
    }

    private func keyIds(prefix: String) -> [KeyID] {
        var ids: [KeyID] = []
        for folder in [credentialsDirectory, directory].compactMap({ $0 }) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names.sorted() where name.hasPrefix(prefix) && name.hasSuffix(".key") {
                let hex = String(name.dropFirst(prefix.count).dropLast(4))
                if let id = KeyID(hex: hex), !ids.contains(id) { ids.append(id) }
            }
        }
        return ids
    }

    /// A key file's path and bytes: from the credentials directory first, then from ``directory``; nil when neither
    /// holds it.
    /// - Throws: ``LogStoreError`` when the directory or the file is unsafe, or the file cannot be read.
    func findKeyFile(_ name: String) throws -> (String, [UInt8])? {
        try Self.refuseSharedDirectory(directory)
        for folder in [credentialsDirectory, directory].compactMap({ $0 }) {
            let path = folder + "/" + name
            let bytes: [UInt8]?
            do {
                bytes = try SecretFile.readIfPresent(path, what: "key file", maxBytes: 4096)
            } catch {
                throw LogStoreError(error.kind == .unsafe ? .unsafeKeyPermissions : .missingKey, error.description)
            }
            if let bytes { return (path, bytes) }
        }
        return nil
    }

    private func readKeyFile(_ name: String) throws -> (String, [UInt8]) {
        if let found = try findKeyFile(name) { return found }
        throw LogStoreError(
            .missingKey,
            "key file \(name) is missing from \(directory)"
                + (credentialsDirectory.map { " and \($0)" } ?? "")
                + "; restore it from your key backup (the log cannot be extended without its active keys)"
        )
    }

    private func writeKeyFile(_ name: String, bytes: [UInt8]) throws {
        try Self.makePrivateDirectory(directory)
        try Self.refuseSharedDirectory(directory)
        let path = directory + "/" + name
        do {
            try PrivateFile.create(path, bytes: bytes)
        } catch {
            throw LogStoreError(.storage, "cannot create key file \(path): \(error)")
        }
        Self.syncDirectory(directory)
    }

    /// Refuses a key directory that group or others may write: whoever can write there can remove the keys, or
    /// add a signing key that a verifier without pinned public keys then trusts (like ssh's `StrictModes`). A
    /// directory that does not exist yet passes (it is created 0700). systemd's credentials directory is
    /// systemd's to guard.
    static func refuseSharedDirectory(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o022 == 0 else {
            throw LogStoreError(
                .unsafeKeyPermissions,
                "key directory \(path) is writable by group or others (mode \(String(mode, radix: 8))): anyone who can "
                    + "write there can remove keys or add a signing key; it must be private: run `chmod 700 \(path)`"
            )
        }
    }

    /// Creates a directory with mode 0700 if it does not exist, and its missing parents with mode 0700 too (as the
    /// agent does for its state directory: `auditctl init --state-dir demo/cli` works without `demo`).
    static func makePrivateDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 { return }
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        if errno == ENOENT {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path, parent != "/" { try makePrivateDirectory(parent) }
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw LogStoreError(.storage, "cannot create directory \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
