public import AuditChain
import Synchronization

/// What this collector process saw of its witnesses since it started (the witnesses page): each witness's last
/// cosignature and its failures. Kept in memory, per replica; the sizes each witness cosigned are in the database
/// (`witness_sizes`).
public final class WitnessActivity: Sendable {
    /// One witness's record.
    public struct Record: Sendable, Hashable {
        /// The last cosignature: the log (hex), the size and when.
        public var lastCosigned: (logId: String, size: UInt64, at: AuditTimestamp)? {
            lastCosignedParts.map { ($0.logId, $0.size, $0.at) }
        }
        /// Failures since the process started.
        public var failures: UInt64 = 0
        /// The last failure: when and why.
        public var lastFailure: (at: AuditTimestamp, reason: String)? {
            lastFailureParts.map { ($0.at, $0.reason) }
        }

        var lastCosignedParts: Cosigned?
        var lastFailureParts: Failure?

        struct Cosigned: Sendable, Hashable {
            var logId: String
            var size: UInt64
            var at: AuditTimestamp
        }

        struct Failure: Sendable, Hashable {
            var at: AuditTimestamp
            var reason: String
        }
    }

    private let records = Mutex<[String: Record]>([:])

    /// An empty record.
    public init() {}

    /// The record of the witness whose vkey is `vkey` (an empty one when nothing was seen).
    public func record(vkey: String) -> Record {
        records.withLock { $0[vkey] ?? Record() }
    }

    /// Records a verified cosignature.
    func cosigned(vkey: String, logId: [UInt8], size: UInt64, at time: AuditTimestamp) {
        records.withLock { records in
            records[vkey, default: Record()].lastCosignedParts = .init(logId: Hex.encode(logId), size: size, at: time)
        }
    }

    /// Records a failure: no cosignature, and why.
    func failed(vkey: String, reason: String, at time: AuditTimestamp) {
        records.withLock { records in
            records[vkey, default: Record()].failures += 1
            records[vkey, default: Record()].lastFailureParts = .init(at: time, reason: reason)
        }
    }
}
