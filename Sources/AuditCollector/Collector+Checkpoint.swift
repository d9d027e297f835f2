import AuditChain
public import TransparencyLog

/// Each log's tree head as a C2SP checkpoint, signed by the collector's key (docs/TRANSPARENCY.md section 7).
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
    /// - Throws: `Checkpoint.Failure` for a root that is not 32 bytes; `SignedNote.Failure` if signing fails.
    public func signedCheckpoint(logId: [UInt8], size: UInt64, rootHash: [UInt8]) throws -> SignedNote {
        let origin = origin(logId: logId)
        let checkpoint = try Checkpoint(origin: origin, size: size, rootHash: rootHash)
        return try checkpoint.sign(with: [NoteSigner(name: origin, privateKey: receiptKey.privateKey)])
    }
}
