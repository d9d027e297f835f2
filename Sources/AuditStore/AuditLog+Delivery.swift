public import AuditChain

/// Seals system records inside a delivery transaction, after the head that transaction read.
///
/// The writer is opened at the first seal, not before: a transaction that only moves delivery rows seals nothing,
/// and goes on when the log refuses to seal (``AuditLog/checkAppendable()``). Whoever damages the newest rows must
/// not also stop the entries before them from leaving the device.
///
/// An accounted removal is sealed only for entries the log still holds, and states the hash its chain links past the
/// range with (``SystemRecordSealer/seal(_:)``).
public struct SystemRecordSealer {
    private let snapshot: LogSnapshot
    private let reader: any LogEntryReader
    private let open: @Sendable (LogSnapshot) throws -> LogWriter
    private(set) var writer: LogWriter?
    let time: AuditTimestamp
    /// Metadata to write with the transaction.
    public var metadata: [String: String] = [:]

    init(
        snapshot: LogSnapshot,
        reader: any LogEntryReader,
        time: AuditTimestamp,
        open: @escaping @Sendable (LogSnapshot) throws -> LogWriter
    ) {
        self.snapshot = snapshot
        self.reader = reader
        self.time = time
        self.open = open
    }

    /// The log's metadata as the transaction read it.
    public var storedMetadata: [String: String] { snapshot.metadata }

    /// Seals an accounted-removal, retention or checkpoint record.
    ///
    /// An accounted removal's `lastRemovedHash` is taken from the log (what the entry after the range links to),
    /// not from the delivery rows: those are unsigned copies, and a wrong hash in a signed record would strand the
    /// collector, which chains across the removed range with it.
    /// - Throws: ``LogStoreError`` when the log refuses to seal; `corruptState` also when the log no longer holds
    ///   every entry of an accounted removal's range, or cannot read the entry after it.
    @discardableResult
    public mutating func seal(_ record: SystemRecord) throws -> SealedEntry {
        // The log's own refusal first: its message names the damage at the head.
        var current = try writer ?? open(snapshot)
        var record = record
        if case .accountedRemoval(var removal) = record {
            removal.lastRemovedHash = try Self.linkedHash(of: removal, head: snapshot.head, in: reader)
            record = .accountedRemoval(removal)
        }
        let entry = current.sealer.seal(record, time: time)
        current.entries.append(entry)
        writer = current
        return entry
    }

    /// The hash the entry after `removal`'s range links to, after checking that the log holds every entry of the
    /// range.
    ///
    /// Entries that leave delivery stay in the log (retention alone deletes them, and only delivered ones), so an
    /// entry missing there was deleted behind the log's back. A record would then turn that deletion into an
    /// accounted removal signed by the device, which `auditctl verify` accepts: instead the record is refused, and
    /// verify goes on reporting the entries missing.
    ///
    /// The hash is what a collector that jumps the range needs: the next entry's `prevHash`, or the head's hash when
    /// the range ends at the head (the record itself then links to it). It is the hash of the last entry as sealed
    /// even when that entry's bytes were altered since, which is often why the collector rejected it.
    private static func linkedHash(
        of removal: SystemRecord.Removal,
        head: ChainHead?,
        in reader: any LogEntryReader
    ) throws -> [UInt8] {
        let (first, last) = (removal.firstSeq, removal.lastSeq)
        guard first <= last else {
            throw LogStoreError(.invalidInput, "a removal of the range \(first)–\(last), which is empty")
        }
        let what = "cannot seal the removal of entries \(first)–\(last) (\(removal.reason))"
        let held = try reader.count(from: first, through: last)
        guard held > 0, UInt64(held - 1) == last - first else {
            throw LogStoreError(
                .corruptState,
                "\(what): the log holds \(held) of the \(last - first + 1) entries of that range. Entries that leave "
                    + "delivery stay in the log, so the others were deleted behind its back, and the device does not "
                    + "sign that they left by policy. `auditctl verify` reports them missing"
            )
        }
        if let head, head.seq == last, !head.hash.isEmpty { return head.hash }
        guard let stored = try reader.entry(at: last + 1), let next = try? SealedEntry(serialized: stored.bytes),
            next.header.seq == last + 1
        else {
            throw LogStoreError(
                .corruptState,
                "\(what): the entry after it, seq \(last + 1), is missing or does not parse as itself, so the hash "
                    + "that links past the range is unknown (altered behind the log's back); run `auditctl verify`"
            )
        }
        return next.header.prevHash
    }

    /// Whether the log lets this transaction seal (``AuditLog/checkAppendable()``). When it does not, the caller
    /// leaves removed rows waiting for their records, as it does while delivery is paused, and goes on delivering:
    /// nothing new enters a log that refuses to seal, so its queue cannot grow meanwhile.
    /// - Throws: ``LogStoreError`` for a failure other than the log's refusal (a key that cannot be read).
    public mutating func maySeal() throws -> Bool {
        guard writer == nil else { return true }
        do {
            writer = try open(snapshot)
            return true
        } catch let error as LogStoreError where error.code == .corruptState {
            return false
        }
    }

    /// What the transaction appends: the sealed records, and the metadata set.
    var append: LogAppend {
        LogAppend(
            entries: writer?.entries ?? [],
            metadata: (writer?.metadata ?? [:]).merging(metadata) { _, new in new }
        )
    }
}

extension AuditLog {
    /// Runs `body` in one write transaction with the delivery table: the table as the body leaves it, the records
    /// it seals and the metadata it sets are committed together, or nothing is.
    /// - Parameters:
    ///   - scope: the rows of the table the body needs (the rest are counted, not loaded).
    ///   - body: reads and changes the table, seals records and sets metadata.
    public func deliveryTransaction<Result: Sendable>(
        scope: DeliveryScope = .all,
        _ body: @Sendable (inout DeliveryTable, inout SystemRecordSealer) throws -> Result
    ) async throws -> Result {
        let now = configuration.now
        return try await storage.withDelivery(scope: scope) { snapshot, table, reader in
            var sealer = SystemRecordSealer(snapshot: snapshot, reader: reader, time: now()) {
                try self.writer(for: $0)
            }
            let result = try body(&table, &sealer)
            return (sealer.append, result)
        }
    }

    /// The serialized entries with these sequence numbers, in order (missing ones are skipped).
    public func entries(seqs: [UInt64]) throws -> [StoredEntry] {
        var result: [StoredEntry] = []
        result.reserveCapacity(seqs.count)
        var index = 0
        let sorted = seqs.sorted()
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] + 1 { end += 1 }
            result += try storage.entries(from: sorted[index], through: sorted[end], limit: end - index + 1)
            index = end + 1
        }
        return result
    }
}

/// Not Sendable: it holds the transaction's reader and writer.
@available(*, unavailable)
extension SystemRecordSealer: Sendable {}
