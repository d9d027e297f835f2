public import AuditChain
import Synchronization

extension AuditLog {
    /// Deletes the delivered entries sealed before `cutoff` from the local log: a prefix after the genesis, up to
    /// the first entry still in delivery (pending, DLQ, or awaiting its removal record), and below the newest
    /// entry that names the active data key (``LogSnapshot/keySource``). A retention-prune record
    /// states the cumulative range `1 ... lastSeq` (docs/FORMAT.md), so the newest one accounts for every entry
    /// retention ever deleted. An undelivered entry never leaves this way.
    /// - Returns: the prune record, or nil when nothing qualified.
    @discardableResult
    public func pruneDelivered(before cutoff: AuditTimestamp) async throws -> SealedEntry? {
        // The first entry after the genesis still in delivery ends the prefix (the genesis may have a row too).
        let lowest = try storage.deliveryTable(scope: .lowest(2)).items.keys.filter { $0 > 0 }.min() ?? .max
        // The newest entry that names the active data key, and those after it, stay: appends walk back to it to
        // check the active keys (LogSnapshot.keySource), and a gap on the way is damage.
        let snapshot = try storage.snapshot()
        guard let head = snapshot.head?.seq else { return nil }
        let kept = min(head, snapshot.keySource?.header.seq ?? head)
        var last: (seq: UInt64, hash: [UInt8])?
        try storage.forEachEntry(from: 1) { stored in
            guard stored.seq < kept, stored.seq < lowest,
                let entry = try? SealedEntry(serialized: stored.bytes), entry.header.time < cutoff
            else { return false }
            last = (stored.seq, entry.entryHash)
            return true
        }
        guard let last else { return nil }
        let record = SystemRecord.Removal(
            reason: "retention",
            firstSeq: 1,
            lastSeq: last.seq,
            count: last.seq,
            lastRemovedHash: last.hash,
            detail: "delivered entries sealed before \(cutoff.rfc3339)"
        )
        let time = configuration.now()
        let sealed = Mutex<SealedEntry?>(nil)
        _ = try await storage.prune(through: last.seq, keep: [0]) { snapshot in
            var writer = try self.writer(for: snapshot)
            let entry = writer.sealer.seal(.retentionPrune(record), time: time)
            sealed.withLock { $0 = entry }
            return LogAppend(entries: [entry], metadata: writer.metadata)
        }
        return sealed.withLock { $0 }
    }
}
