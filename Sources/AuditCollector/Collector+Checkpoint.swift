import AuditChain
public import AuditWire
public import TransparencyLog

/// Each log's tree head as a C2SP checkpoint, signed by the collector's key (docs/TRANSPARENCY.md section 6).
extension Collector {
    /// The origin of a log's checkpoints, which is also the note key name: `<name>/<log id hex>`.
    public func origin(logId: [UInt8]) -> String { name + "/" + Hex.encode(logId) }

    /// The log's tree head as a signed checkpoint note; nil while the tree is empty. The tree only grows at its end,
    /// so every checkpoint signed for a log is consistent with every earlier one.
    public func signedCheckpoint(logId: [UInt8]) async throws -> SignedNote? {
        let head = try await store.treeHead(logId: logId)
        guard head.size > 0 else { return nil }
        return try signedCheckpoint(logId: logId, size: head.size, rootHash: head.root)
    }

    /// The checkpoint of the log's tree at `size` leaves with root `rootHash`, signed as
    /// ``signedCheckpoint(logId:)`` signs the head: for answers read at one tree size (a proof and its checkpoint).
    /// Callers pass a size and root read from the stored tree, never anything else: that is what keeps every signed
    /// checkpoint consistent.
    /// - Throws: `Checkpoint.Failure` for a root that is not 32 bytes; `SignedNote.Failure` if signing fails.
    public func signedCheckpoint(logId: [UInt8], size: UInt64, rootHash: [UInt8]) throws -> SignedNote {
        let origin = origin(logId: logId)
        let checkpoint = try Checkpoint(origin: origin, size: size, rootHash: rootHash)
        return try checkpoint.sign(with: [NoteSigner(name: origin, privateKey: receiptKey.privateKey)])
    }

    /// The version 2 receipt of the log's tree as it is now (docs/PROTOCOL.md section 3.2); nil while it is empty.
    /// Its checkpoint carries the configured witnesses' cosignatures (``witnessed(_:logId:size:)``).
    /// - Parameter from: the batch's `treeSize`, for the consistency proof.
    public func treeReceipt(logId: [UInt8], from: UInt64?) async throws -> TreeReceipt? {
        guard let parts = try await store.treeReceiptParts(logId: logId, from: from) else { return nil }
        return try await treeReceipt(logId: logId, parts: parts, from: from)
    }

    /// The version 2 receipt made of `parts`, read from one state of the log's tree (the ingest transaction's).
    func treeReceipt(logId: [UInt8], parts: TreeReceiptParts, from: UInt64?) async throws -> TreeReceipt {
        let signed = try signedCheckpoint(logId: logId, size: parts.size, rootHash: parts.root)
        let note = await witnessed(signed, logId: logId, size: parts.size)
        return TreeReceipt(
            logId: logId,
            seq: parts.seq,
            entryHash: parts.entryHash,
            leafIndex: parts.size - 1,
            checkpoint: String(decoding: note.bytes, as: UTF8.self),
            inclusion: parts.inclusion,
            consistency: parts.consistency.map { TreeReceipt.Consistency(from: from ?? 0, proof: $0) }
        )
    }
}
