import AuditChain
import Synchronization

/// Each log's keys as this process's last ingest transaction of the log read and changed them, so that the next
/// batch's signatures are checked in advance (on all cores, outside the transaction) without a read of its own.
///
/// Only a hint: the transaction reads the log's keys and entries itself and decides with them
/// (``IncomingEntry/settle(_:keys:held:)`` checks what the hint missed, such as a key another replica learned). A
/// key id names one key, so a check made with a key of the hint is the check the transaction would make.
final class LogKeyCache: Sendable {
    /// Logs remembered, at most; past it the cache starts over.
    static let capacity = 100_000
    private let logs = Mutex<[[UInt8]: [KeyID: KeyGrant]]>([:])

    /// The keys remembered for `logId`, or nil.
    func keys(of logId: [UInt8]) -> [KeyID: KeyGrant]? {
        logs.withLock { $0[logId] }
    }

    /// Remembers `keys` for `logId` (an empty set too: a log without a genesis yet has none).
    func remember(_ keys: [KeyID: KeyGrant], of logId: [UInt8]) {
        logs.withLock { logs in
            if logs.count >= Self.capacity, logs[logId] == nil { logs.removeAll(keepingCapacity: true) }
            logs[logId] = keys
        }
    }
}
