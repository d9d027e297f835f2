import Foundation
import AuditSupport

/// The log's idempotency secret beside its other key files (``IdempotencySecret``).
extension KeyStore {
    /// The secret's file name.
    static let idempotencyFileName = "idempotency.key"

    /// Reads the idempotency secret: from the credentials directory first, then from ``directory``.
    /// - Returns: nil when neither holds the file.
    /// - Throws: ``LogStoreError`` when the file is unsafe, unreadable or not 32 bytes.
    public func idempotencySecret() throws -> IdempotencySecret? {
        guard let (path, bytes) = try findKeyFile(Self.idempotencyFileName) else { return nil }
        do {
            return try IdempotencySecret(rawRepresentation: bytes)
        } catch {
            throw LogStoreError(.invalidKey, "\(path) is not a 32-byte idempotency secret")
        }
    }

    /// Creates the idempotency secret file (mode 0600, exclusively, synced) in ``directory``; when another process
    /// created it first, returns that one.
    /// - Throws: ``LogStoreError`` when it cannot be written or read back.
    public func createIdempotencySecret(_ bytes: [UInt8]) throws -> IdempotencySecret {
        let secret = try IdempotencySecret(rawRepresentation: bytes)
        try Self.makePrivateDirectory(directory)
        try Self.refuseSharedDirectory(directory)
        let path = directory + "/" + Self.idempotencyFileName
        do {
            try PrivateFile.create(path, bytes: bytes)
        } catch .exists {
            guard let existing = try idempotencySecret() else {
                throw LogStoreError(.storage, "\(path) exists but cannot be read back")
            }
            return existing
        } catch {
            throw LogStoreError(.storage, "cannot create key file \(path): \(error)")
        }
        Self.syncDirectory(directory)
        return secret
    }
}
