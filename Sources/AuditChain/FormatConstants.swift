/// The fixed constants of the format (docs/FORMAT.md, "Constants").
public enum FormatConstants: Sendable {
    /// The first four bytes of every entry header: ASCII `AUDC`.
    public static let magic: [UInt8] = Array("AUDC".utf8)
    /// Format version 1: every entry signed, keys rotated by key rotation records.
    public static let version: UInt8 = 1
    /// Format version 2: signing keys evolve by epochs, one signature per commit (docs/FORMAT.md, section 13).
    public static let version2: UInt8 = 2
    /// The header flag of a version 2 entry that carries a signature (section 13.1).
    public static let signedFlag: UInt16 = 0x0001
    /// The header flag of a version 2 event sealed under its subject's content key, whose id the header's data key
    /// id is (section 13.9); never set on a system record.
    public static let subjectFlag: UInt16 = 0x0002
    /// The longest run of unsigned version 2 entries before a signed one (section 13.1): a writer signs at least
    /// every this many entries, and a verifier reports entries of a longer run as not covered by a signature.
    public static let maxUnsignedRun = 4096
    /// How far, in milliseconds, a version 2 entry's sealing time may lie outside its epoch's window (section 13.4).
    public static let epochTimeSkewMilliseconds: Int64 = 60_000
    /// Size in bytes of an encoded ``EntryHeader``.
    public static let headerSize = 108
    /// Size of SHA-256 outputs: entry hashes, payload digests.
    public static let hashSize = 32
    /// Size of key ids.
    public static let keyIdSize = 16
    /// Size of log ids.
    public static let logIdSize = 16
    /// Size of AES-GCM nonces.
    public static let nonceSize = 12
    /// Size of AES-GCM tags.
    public static let tagSize = 16
    /// Size of Ed25519 signatures.
    public static let signatureSize = 64
    /// Size of an Ed25519 public key.
    public static let publicKeySize = 32
    /// Largest sealed payload an entry may carry (1 MiB).
    public static let maxPayloadLength = 1 << 20

    /// Domain-separation prefix of payload digests.
    public static let payloadDomain: [UInt8] = Array("audit-chain/v1/payload".utf8)
    /// Domain-separation prefix of entry hashes.
    public static let entryDomain: [UInt8] = Array("audit-chain/v1/entry".utf8)
    /// Domain-separation prefix of entry signatures.
    public static let signatureDomain: [UInt8] = Array("audit-chain/v1/signature".utf8)
    /// Domain-separation prefix of detached checkpoint signatures.
    public static let checkpointDomain: [UInt8] = Array("audit-chain/v1/checkpoint".utf8)
    /// Domain-separation prefix of signing key ids.
    public static let signingKeyIdDomain: [UInt8] = Array("audit-chain/v1/signing-key-id".utf8)
    /// HMAC message of data key ids.
    public static let dataKeyIdLabel: [UInt8] = Array("audit-chain/v1/data-key-id".utf8)
    /// HKDF info prefix of a subject's content key (section 13.9), followed by the data key's id.
    public static let subjectKeyInfo: [UInt8] = Array("audit-chain/v2/subject-key".utf8)
    /// HMAC message prefix of a subject's tag (section 13.9), followed by the user id's UTF-8 bytes.
    public static let subjectTagLabel: [UInt8] = Array("audit-chain/v2/subject-tag".utf8)
}
