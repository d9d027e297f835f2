public import AuditChain
public import AuditWire
public import Crypto
import Dispatch
public import Logging

/// The reference backend's logic: verifies, de-duplicates and stores delivered batches and signs receipts for
/// the contiguous head (docs/PROTOCOL.md). The HTTP layer is ``CollectorServer``.
public final class Collector: Sendable {
    /// Where entries are stored.
    public let store: CollectorStore
    /// The key that signs receipts.
    public let receiptKey: SigningKey
    /// Keys registered with `--trust`, valid for every log.
    public let trusted: [KeyID: Curve25519.Signing.PublicKey]
    /// The name in each log's checkpoint origin, `<name>/<log id hex>`.
    public let name: String
    /// The witnesses asked to cosign each version 2 answer's checkpoint (docs/WITNESS.md).
    let witnesses: [WitnessClient]
    /// What this process saw of its witnesses: last cosignatures and failures (the witnesses page).
    public let witnessActivity = WitnessActivity()
    /// Where witness failures are logged.
    let logger: Logger
    /// Each log's keys as this process last stored them, to check signatures before the transaction.
    let logKeys = LogKeyCache()
    private let clock: @Sendable () -> AuditTimestamp

    /// The name a collector gives its logs unless configured.
    public static let defaultName = "audit-collector.localhost"

    /// Creates a collector.
    /// - Parameters:
    ///   - store: the database.
    ///   - receiptKey: the collector's Ed25519 key.
    ///   - trustedKeys: device keys registered in advance; when empty, a log's genesis key is pinned on first
    ///     sight (trust on first use).
    ///   - name: the name in each log's checkpoint origin.
    ///   - witnesses: the witnesses asked to cosign each version 2 answer's checkpoint.
    ///   - witnessTimeout: the deadline of one witness request.
    ///   - logger: where witness failures are logged.
    ///   - clock: the time written into receipts.
    public init(
        store: CollectorStore,
        receiptKey: SigningKey,
        trustedKeys: [Curve25519.Signing.PublicKey] = [],
        name: String = Collector.defaultName,
        witnesses: [WitnessEndpoint] = [],
        witnessTimeout: Duration = .seconds(5),
        logger: Logger = Logger(label: "auditd.collector"),
        clock: @escaping @Sendable () -> AuditTimestamp = { AuditTimestamp.now() }
    ) {
        self.store = store
        self.name = name
        self.witnesses = witnesses.map { WitnessClient(endpoint: $0, timeout: witnessTimeout) }
        self.logger = logger
        self.receiptKey = receiptKey
        self.trusted = Dictionary(trustedKeys.map { (KeyID.signing($0), $0) }, uniquingKeysWith: { first, _ in first })
        self.clock = clock
    }

    /// Processes one batch: one result per entry in batch order, and a receipt for the head after the commit.
    /// - Throws: ``CollectorError`` or a database error when storing fails (nothing of the batch is stored).
    public func ingest(_ batch: SyncBatch) async throws -> SyncResponse {
        try await ingestReporting(batch).response
    }

    /// ``ingest(_:)``, also telling what became of the batch's device checkpoint (nil when it carried none, when
    /// it had no entries, or when it replayed a batch already stored), how many of its incidents were not kept
    /// (the log holds ``CollectorStore/maxIncidentsPerLog`` already), so the server can log them, and how long
    /// verifying its entries took (for the metrics; nil when it had none).
    ///
    /// The verify time is the entries' parsing, hashes and signature checks (on all cores, before the transaction)
    /// plus the decision of each entry's result against the log's keys and held entries (chain links, forks, gaps),
    /// inside the transaction but without its reads and writes.
    public func ingestReporting(
        _ batch: SyncBatch
    ) async throws -> (
        response: SyncResponse, checkpoint: CheckpointVerdict?, incidentsNotKept: Int, verifyDuration: Duration?
    ) {
        guard !batch.entries.isEmpty else {
            let head = try await store.head(logId: batch.logId)
            return (try await response(batch, results: [], head: head), nil, 0, nil)
        }
        // The log's keys as its last transaction in this process left them, or read now: only to check signatures
        // in advance, on all cores and outside the transaction, which decides with the keys and entries it reads.
        var preview: (keys: [KeyID: KeyGrant], held: [UInt64: HeldEntry])
        if let keys = logKeys.keys(of: batch.logId) {
            preview = (keys, [:])
        } else {
            preview = try await store.preview(logId: batch.logId, seqs: batch.entries.map(\.seq))
        }
        var known = trusted
        for (id, grant) in preview.keys { known[id] = grant.publicKey }
        let items = batch.entries
        let held = preview.held
        let knownKeys = known
        let (incoming, prepareDuration) = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let started = ContinuousClock.now
                let prepared = IncomingEntry.prepare(items, knownKeys: knownKeys, held: held)
                continuation.resume(returning: (prepared, ContinuousClock.now - started))
            }
        }
        let outcome = try await store.ingest(
            batch: CollectorStore.BatchKey(batch),
            entries: incoming,
            checkpoint: batch.checkpoint,
            trusted: trusted,
            receivedAt: clock()
        )
        if !outcome.replayed { logKeys.remember(outcome.keys, of: batch.logId) }
        let response = try await response(
            batch,
            results: outcome.results,
            head: outcome.head,
            committed: outcome.committed
        )
        return (response, outcome.checkpoint, outcome.incidentsNotKept, prepareDuration + outcome.decideDuration)
    }

    /// The answer in the batch's version: a JSON receipt for the head (1), or the tree's signed checkpoint with its
    /// proofs (2). Both are made from what the commit stored: the tree as the batch's transaction left it
    /// (`committed`), or else the tree as it is now.
    private func response(
        _ batch: SyncBatch,
        results: [SyncEntryResult],
        head: CollectorHead?,
        committed: CommittedTree? = nil
    ) async throws
        -> SyncResponse
    {
        guard batch.version == SyncWire.treeVersion else {
            return SyncResponse(results: results, receipt: head.map { receipt(logId: batch.logId, head: $0) })
        }
        if let committed,
            let parts = try await store.treeReceiptParts(logId: batch.logId, from: batch.treeSize, committed: committed)
        {
            return SyncResponse(
                results: results,
                treeReceipt: try await treeReceipt(logId: batch.logId, parts: parts, from: batch.treeSize)
            )
        }
        return SyncResponse(
            results: results,
            treeReceipt: try await treeReceipt(logId: batch.logId, from: batch.treeSize)
        )
    }

    /// What the collector holds of a log, with a receipt for its head; nil for a log it knows nothing of.
    public func status(logId: [UInt8]) async throws -> LogStatus? {
        guard var status = try await store.status(logId: logId) else { return nil }
        status.receipt = status.head.map { receipt(logId: logId, head: $0) }
        return status
    }

    /// Signs a receipt for `head` of the log, now.
    public func receipt(logId: [UInt8], head: CollectorHead) -> CollectorReceipt {
        CollectorReceipt(logId: logId, seq: head.seq, entryHash: head.hash, receivedAt: clock(), key: receiptKey)
    }
}
