import Crypto

/// The hashes of an RFC 6962 Merkle tree (RFC 6962 section 2.1; RFC 9162 section 2.1.1): SHA-256, with a one-byte
/// prefix that keeps a leaf from ever being read as an interior node (second-preimage resistance).
public enum MerkleHash: Sendable {
    /// Bytes in a hash.
    public static let size = 32

    /// The hash of an empty tree, `MTH({}) = SHA-256()`.
    public static let empty: [UInt8] = Array(SHA256.hash(data: [UInt8]()))

    /// The hash of a leaf: `SHA-256(0x00 || leaf)`.
    public static func leaf(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: [0x00])
        hasher.update(data: Array(bytes))
        return Array(hasher.finalize())
    }

    /// The hash of an interior node: `SHA-256(0x01 || left || right)`.
    public static func node(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: [0x01])
        hasher.update(data: left)
        hasher.update(data: right)
        return Array(hasher.finalize())
    }
}
