import AuditChain
import AuditWire

/// How far the collector's **verified** copy is behind the device's log: the entries sealed but not covered by a
/// receipt the agent verified, and since when (docs/DELIVERY.md, "Receipts").
///
/// This, not an empty queue, is what "healthy" means: a collector that stores entries but cannot advance its head
/// (an unbridged gap, a refused rotation) leaves the queue empty and the lag growing.
public struct ReceiptLag: Sendable, Hashable {
    /// The device's head.
    public var deviceHead: UInt64?
    /// The head the latest verified receipt states; nil before the first one.
    public var collectorHead: UInt64?
    /// The sealing time (wall, milliseconds) of the oldest entry not covered, nil when every entry is covered (or
    /// the entry cannot be read).
    public var since: Int64?

    /// Creates a lag.
    public init(deviceHead: UInt64?, collectorHead: UInt64?, since: Int64?) {
        self.deviceHead = deviceHead
        self.collectorHead = collectorHead
        self.since = since
    }

    /// Entries sealed but not covered by a verified receipt.
    public var entries: UInt64 {
        guard let deviceHead else { return 0 }
        guard let collectorHead else { return deviceHead == .max ? .max : deviceHead + 1 }
        return deviceHead > collectorHead ? deviceHead - collectorHead : 0
    }

    /// How long the oldest uncovered entry has waited at wall time `now` (milliseconds, never negative).
    public func age(now: Int64) -> Int64 {
        guard entries > 0, let since else { return 0 }
        let (age, overflow) = now.subtractingReportingOverflow(since)
        return overflow ? (now > since ? .max : 0) : max(0, age)
    }

    /// Whether the verified copy is too far behind: more than ``DeliveryPolicy/degradedLag`` entries, or the oldest
    /// uncovered entry older than ``DeliveryPolicy/degradedLagAge``.
    public func isLagging(now: Int64, policy: DeliveryPolicy) -> Bool {
        guard entries > 0 else { return false }
        if entries > UInt64(max(0, policy.degradedLag)) { return true }
        return age(now: now) > policy.degradedLagAge.milliseconds
    }

    /// Reads the lag from the storage: the head, the verified receipt kept beside the log (from `trust` when the
    /// caller has it, else read now), and the sealing time of the first entry after it.
    public static func read(_ storage: any LogStorage, trust: CollectorTrust? = nil) throws -> ReceiptLag {
        let snapshot = try storage.snapshot()
        let receipt = (trust ?? CollectorTrust(metadata: snapshot.metadata)).receiptHead
        var lag = ReceiptLag(deviceHead: snapshot.head?.seq, collectorHead: receipt?.seq, since: nil)
        guard lag.entries > 0, let head = lag.deviceHead else { return lag }
        // The first uncovered entry, or the first one the log still holds after it (retention may have pruned it).
        let first: UInt64 = receipt.map { $0.seq == .max ? .max : $0.seq + 1 } ?? 0
        if let stored = try storage.entries(from: first, through: head, limit: 1).first,
            let header = try? EntryHeader(decoding: Array(stored.bytes.prefix(FormatConstants.headerSize)))
        {
            lag.since = header.time.millisecondsSinceEpoch
        }
        return lag
    }
}
