/// Best-effort overwriting of sensitive byte buffers (K_bio, session proofs and secrets, passwords).
///
/// Limits in Swift: only the storage the buffer refers to *now* is zeroed. An `Array` shares its storage on copy,
/// and writing to shared storage first makes a private copy (copy-on-write), so a copy made earlier keeps the
/// bytes: wipe only buffers you own uniquely, and wipe every copy. Bytes that passed through a `String`, `Data` or
/// a platform API cannot be reached; a reallocation (growing an array) leaves the old block unwiped; the
/// optimizer could in principle drop stores it proves dead (the call is kept opaque to make that unlikely).
/// swift-crypto's `SymmetricKey` zeroes its own storage when released.
public enum SecureWipe: Sendable {
    /// Overwrites every byte of `bytes` with zero, keeping its length.
    @inline(never)
    public static func wipe(_ bytes: inout [UInt8]) {
        _ = bytes.withUnsafeMutableBytes { raw in
            raw.initializeMemory(as: UInt8.self, repeating: 0)
        }
    }
}
