public import Crypto

/// A 16-byte key identifier derived from the key (docs/FORMAT.md, "Key ids").
public struct KeyID: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// All zero: the data key id of records that are not encrypted.
    public static let none = KeyID(unchecked: [UInt8](repeating: 0, count: FormatConstants.keyIdSize))

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Creates an id from 16 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == FormatConstants.keyIdSize else { return nil }
        self.bytes = bytes
    }

    /// Parses 32 hexadecimal digits.
    public init?(hex: String) {
        guard let bytes = Bytes.unhex(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// Lowercase hexadecimal.
    public var hex: String { Bytes.hex(bytes) }
    public var description: String { hex }

    /// The id of an Ed25519 public key: the first 16 bytes of SHA-256("audit-chain/v1/signing-key-id" || key).
    public static func signing(_ key: Curve25519.Signing.PublicKey) -> KeyID {
        var hasher = SHA256()
        hasher.update(data: FormatConstants.signingKeyIdDomain)
        hasher.update(data: key.rawRepresentation)
        return KeyID(unchecked: Array(hasher.finalize().prefix(FormatConstants.keyIdSize)))
    }

    /// The id of an AES-256 data key: the first 16 bytes of HMAC-SHA256(key, "audit-chain/v1/data-key-id").
    public static func data(_ key: SymmetricKey) -> KeyID {
        let mac = HMAC<SHA256>.authenticationCode(for: FormatConstants.dataKeyIdLabel, using: key)
        return KeyID(unchecked: Array(Array(mac).prefix(FormatConstants.keyIdSize)))
    }
}

/// An AES-256-GCM key that encrypts event payloads, with its id.
public struct DataKey: Sendable {
    /// The key.
    public let key: SymmetricKey
    /// Its id.
    public let id: KeyID

    /// Wraps a 32-byte key.
    /// - Throws: ``AuditChainError`` if the key is not 32 bytes.
    public init(rawRepresentation bytes: [UInt8]) throws(AuditChainError) {
        guard bytes.count == 32 else {
            throw AuditChainError(.invalidKey, "a data key is 32 bytes (AES-256), got \(bytes.count)")
        }
        self.key = SymmetricKey(data: bytes)
        self.id = KeyID.data(key)
    }

    /// A fresh random key from the system's secure generator.
    public static func generate() -> DataKey {
        let key = SymmetricKey(size: .bits256)
        return DataKey(key: key)
    }

    init(key: SymmetricKey) {
        self.key = key
        self.id = KeyID.data(key)
    }

    /// The raw 32 bytes, for writing a key file. Never log them.
    public var rawRepresentation: [UInt8] { key.withUnsafeBytes { Array($0) } }
}

/// An Ed25519 signing key, with its public key and id.
public struct SigningKey: Sendable {
    /// The private key.
    public let privateKey: Curve25519.Signing.PrivateKey
    /// Its id.
    public let id: KeyID

    /// Wraps a private key.
    public init(_ privateKey: Curve25519.Signing.PrivateKey) {
        self.privateKey = privateKey
        self.id = KeyID.signing(privateKey.publicKey)
    }

    /// Wraps a 32-byte private key seed.
    /// - Throws: ``AuditChainError`` if the bytes are not a valid key.
    public init(rawRepresentation bytes: [UInt8]) throws(AuditChainError) {
        do {
            self.init(try Curve25519.Signing.PrivateKey(rawRepresentation: bytes))
        } catch {
            throw AuditChainError(.invalidKey, "a signing key is a 32-byte Ed25519 seed, got \(bytes.count) bytes")
        }
    }

    /// A fresh random key.
    public static func generate() -> SigningKey { SigningKey(Curve25519.Signing.PrivateKey()) }

    /// The public key.
    public var publicKey: Curve25519.Signing.PublicKey { privateKey.publicKey }

    /// Signs `message`.
    func sign(_ message: [UInt8]) -> [UInt8] {
        // Signing with a valid key over a byte buffer cannot fail in swift-crypto.
        Array(try! privateKey.signature(for: message))
    }
}
