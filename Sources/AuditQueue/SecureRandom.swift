import Crypto

/// Bytes from swift-crypto's secure generator (BoringSSL's `RAND_bytes`, seeded by the kernel), many per call.
enum SecureRandom {
    /// `count` random bytes.
    static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }
}
