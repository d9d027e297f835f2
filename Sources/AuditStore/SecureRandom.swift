#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes from the operating system's secure generator, many per call.
///
/// `SystemRandomNumberGenerator` (and swift-crypto's key generation, which uses it) makes one system call per
/// 8 bytes: 1.3 µs per 12-byte nonce here, as much as the SQLite insert of the entry. `getentropy(3)` (the
/// kernel's CSPRNG, as `getrandom(2)`) fills 256 bytes per call.
enum SecureRandom {
    /// `count` random bytes. Stops the process if the kernel's generator fails (it cannot once it is seeded, which
    /// happens early in boot), as the standard library's generator does: a nonce or key must never be made of
    /// anything else.
    static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            #if canImport(Glibc)
            var filled = 0
            while filled < count {
                let piece = min(256, count - filled)
                guard getentropy(buffer.baseAddress! + filled, piece) == 0 else {
                    preconditionFailure("getentropy failed with errno \(errno)")
                }
                filled += piece
            }
            #else
            arc4random_buf(buffer.baseAddress!, count)
            #endif
            initialized = count
        }
    }
}
