public import AuditChain
import Crypto
import AuditSupport
import Foundation

/// The log's subject master key (docs/FORMAT.md, section 13.9): one file, `keys/subjects.key` (32 random bytes,
/// 0600), from which the key that wraps every subject's secret in the key table and the key of subjects' tags are
/// derived. 100 000 subjects are 100 000 rows of the database, not 100 000 files.
public struct SubjectMasterKey: Sendable {
    /// Wraps (AES-256-GCM) each subject's secret in the key table.
    let wrapKey: SymmetricKey
    /// Makes each subject's tag (``SubjectKey/tag(userId:tagKey:)``).
    let tagKey: SymmetricKey

    /// The file name in the key directory.
    static let fileName = "subjects.key"

    init(bytes: [UInt8]) {
        let master = SymmetricKey(data: bytes)
        wrapKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master,
            info: Array("audit-store/subject-wrap".utf8),
            outputByteCount: 32
        )
        tagKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master,
            info: Array("audit-store/subject-tag".utf8),
            outputByteCount: 32
        )
    }

    /// The tag of a user id.
    public func tag(userId: String) -> [UInt8] { SubjectKey.tag(userId: userId, tagKey: tagKey) }

    /// A subject's secret wrapped for the key table: nonce || ciphertext || tag, the row's tag as associated data
    /// (a wrapped secret moved to another row does not open).
    func wrap(_ secret: [UInt8], tag: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        let box = try AES.GCM.seal(secret, using: wrapKey, nonce: AES.GCM.Nonce(data: nonce), authenticating: tag)
        guard let combined = box.combined else { throw LogStoreError(.storage, "AES-GCM gave no sealed box") }
        return Array(combined)
    }

    /// A subject's secret from its row.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/corruptState``) when the row does not open.
    func unwrap(_ wrapped: [UInt8], tag: [UInt8]) throws -> [UInt8] {
        guard let box = try? AES.GCM.SealedBox(combined: wrapped),
            let secret = try? AES.GCM.open(box, using: wrapKey, authenticating: tag),
            secret.count == SubjectKey.secretSize
        else {
            throw LogStoreError(
                .corruptState,
                "a row of the subject key table does not open with the log's subject master key (\(Self.fileName))"
            )
        }
        return Array(secret)
    }
}

extension KeyStore {
    /// The subject master key; nil when the file does not exist and `create` is false. Created (0600, exclusively,
    /// synced) when `create` is true and it does not exist; a concurrent creation by another process wins and is
    /// read.
    /// - Throws: ``LogStoreError`` when the file is unsafe, has the wrong size, or cannot be created.
    public func subjectMasterKey(create: Bool, randomBytes: (Int) -> [UInt8]) throws -> SubjectMasterKey? {
        if let (path, bytes) = try findKeyFile(SubjectMasterKey.fileName) {
            guard bytes.count == SubjectKey.secretSize else {
                throw LogStoreError(.invalidKey, "\(path) is not a 32-byte subject master key")
            }
            return SubjectMasterKey(bytes: bytes)
        }
        guard create else { return nil }
        let bytes = randomBytes(SubjectKey.secretSize)
        guard bytes.count == SubjectKey.secretSize else {
            throw LogStoreError(.storage, "the random generator gave \(bytes.count) bytes, not 32")
        }
        try Self.makePrivateDirectory(directory)
        try Self.refuseSharedDirectory(directory)
        do {
            try PrivateFile.create(directory + "/" + SubjectMasterKey.fileName, bytes: bytes)
        } catch .exists {
            return try subjectMasterKey(create: false, randomBytes: randomBytes)
        } catch {
            throw LogStoreError(.storage, "cannot create \(SubjectMasterKey.fileName): \(error)")
        }
        Self.syncDirectory(directory)
        return SubjectMasterKey(bytes: bytes)
    }
}

extension KeyStore {
    /// Every key that opens this device's events, by id: the data keys and, when the state directory (the key
    /// directory's parent) holds a log with a subject master key, every subject's content key under each of them
    /// (``AuditLog/subjectContentKeys(storage:keys:)``). An erased subject has no row, so no key.
    public func readingKeysById() throws -> [KeyID: DataKey] {
        var keys = try dataKeysById()
        let state = StateDirectory(path: (directory as NSString).deletingLastPathComponent)
        guard state.exists, try subjectMasterKey(create: false, randomBytes: { _ in [] }) != nil else { return keys }
        let storage = try SQLiteLogStorage(path: state.databasePath)
        for key in try AuditLog.subjectContentKeys(storage: storage, keys: self) where keys[key.id] == nil {
            keys[key.id] = key
        }
        return keys
    }
}
