/// Where an appended event landed.
public struct AppendReceipt: Sendable, Hashable {
    /// Its sequence number.
    public var seq: UInt64
    /// Its entry hash.
    public var entryHash: [UInt8]
    /// Whether the log already held this event (a retry with the same idempotency key, or a repeat within one
    /// append): `seq` is the original's and nothing was written for it.
    public var isDuplicate = false
}
