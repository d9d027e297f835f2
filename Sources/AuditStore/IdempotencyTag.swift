import AuditChain
import Crypto

/// What the log's idempotency index stores for an event's `idempotencyKey`: never the key itself (producer data,
/// sealed encrypted in the payload), but the first 16 bytes of HMAC-SHA256 under the log's idempotency secret,
/// a local random key kept with the other key files and never in the database. Without the secret, a tag tells
/// nothing about the key, even a guessable one.
public struct IdempotencyTag: Sendable, Hashable {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// Wraps 16 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.size else { return nil }
        self.bytes = bytes
    }

    fileprivate init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Bytes of a tag: 128 bits, so that two keys of one log share a tag by chance with probability about
    /// n² / 2^129 (a shared tag is never taken for a retry unless the two events are equal byte for byte).
    public static let size = 16
}

/// What the idempotency index says of a tag it holds: the entry that carries the key, and whether that event's
/// `occurredAt` was stamped at ingest because its producer left it out (then a retry that leaves it out too is
/// compared apart from the stamps; docs/CATALOGUE.md, "Idempotency keys and retries").
public struct IdempotencyHolder: Sendable, Hashable {
    /// The entry's seq (or the seq a claim of the same transaction reserved).
    public var seq: UInt64
    /// Whether the event's producer left `occurredAt` out.
    public var occurredAtStamped: Bool

    /// Creates a holder.
    public init(seq: UInt64, occurredAtStamped: Bool) {
        self.seq = seq
        self.occurredAtStamped = occurredAtStamped
    }
}

/// The log's idempotency secret: 32 random bytes in the key file `idempotency.key` (mode 0600). Scope: one log;
/// the index maps a key to the one entry of this log that carries it.
public struct IdempotencySecret: Sendable {
    /// HMAC state keyed with the secret and fed the tag domain: each tag copies it (no key schedule per tag).
    private let keyed: HMAC<SHA256>
    /// The secret's id, kept in the log's metadata so that a replaced or lost secret is noticed rather than
    /// silently letting retries of older events through as new ones: the first 16 bytes of
    /// HMAC-SHA256(secret, "audit-chain/v1/idempotency-secret-id"), in hex.
    public let id: String

    private static let idLabel = Array("audit-chain/v1/idempotency-secret-id".utf8)
    /// Prefix of the tagged message; it ends with a NUL byte, which the id label does not hold.
    private static let tagDomain = Array("audit-chain/v1/idempotency-key".utf8) + [0]

    /// Wraps the 32 bytes of a secret.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/invalidKey``) for any other length.
    public init(rawRepresentation bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw LogStoreError(.invalidKey, "an idempotency secret is 32 bytes, got \(bytes.count)")
        }
        let key = SymmetricKey(data: bytes)
        let mac = HMAC<SHA256>.authenticationCode(for: Self.idLabel, using: key)
        id = Hex.encode(Array(mac).prefix(16))
        var keyed = HMAC<SHA256>(key: key)
        keyed.update(data: Self.tagDomain)
        self.keyed = keyed
    }

    /// The tag of an idempotency key: HMAC-SHA256(secret, "audit-chain/v1/idempotency-key" || 0x00 || key),
    /// truncated to ``IdempotencyTag/size`` bytes.
    public func tag(_ idempotencyKey: String) -> IdempotencyTag {
        var mac = keyed
        var key = idempotencyKey
        key.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        return IdempotencyTag(unchecked: Array(Array(mac.finalize()).prefix(IdempotencyTag.size)))
    }
}
