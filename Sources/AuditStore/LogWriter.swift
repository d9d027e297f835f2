import AuditChain

/// The entries and metadata one transaction is building.
struct LogWriter {
    var sealer: ChainSealer
    var metadata: [String: String]
    let snapshot: LogSnapshot
    var entries: [SealedEntry] = []

    mutating func rotate(to signing: SigningKey, _ data: DataKey, reason: String, time: AuditTimestamp) -> SealedEntry {
        let entry = sealer.rotateKeys(signingKey: signing, dataKey: data, reason: reason, time: time)
        entries.append(entry)
        metadata[AuditLog.Meta.signingKeyId] = signing.id.hex
        metadata[AuditLog.Meta.dataKeyId] = data.id.hex
        metadata[AuditLog.Meta.dataKeySince] = String(entry.header.seq)
        return entry
    }
}
