public import Crypto

/// Per-subject content keys of format version 2 (docs/FORMAT.md, section 13.9): an event with a `userId` is sealed
/// under a key derived from a random secret of its subject and the data key of its epoch, so destroying the secret
/// makes exactly that subject's events unreadable in every copy of the log.
public enum SubjectKey: Sendable {
    /// The size of a subject's secret and of the log's subject master key.
    public static let secretSize = 32

    /// The subject's tag: HMAC-SHA256(tagKey, "audit-chain/v2/subject-tag" || userId), the row key of the subject's
    /// secret in the key table. The tag key is a secret of the log, so a tag cannot be brute-forced from a list of
    /// user ids; it never appears in an entry.
    public static func tag(userId: String, tagKey: SymmetricKey) -> [UInt8] {
        var mac = HMAC<SHA256>(key: tagKey)
        mac.update(data: FormatConstants.subjectTagLabel)
        mac.update(data: Array(userId.utf8))
        return Array(mac.finalize())
    }

    /// The subject's content key under one data key: HKDF-SHA256(ikm = secret, salt = the data key's 32 bytes,
    /// info = "audit-chain/v2/subject-key" || data key id, 32 bytes). Its id (the header's data key id) is computed
    /// as any data key's: the first 16 bytes of HMAC-SHA256(contentKey, "audit-chain/v1/data-key-id").
    /// - Precondition: `secret` is ``secretSize`` bytes.
    public static func contentKey(secret: [UInt8], dataKey: DataKey) -> DataKey {
        precondition(secret.count == secretSize, "a subject secret is 32 bytes")
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret),
            salt: dataKey.rawRepresentation,
            info: FormatConstants.subjectKeyInfo + dataKey.id.bytes,
            outputByteCount: 32
        )
        return DataKey(key: key)
    }
}
