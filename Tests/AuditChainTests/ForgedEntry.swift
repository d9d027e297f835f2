import AuditChain
import Crypto

extension SealedEntry {
    /// A copy with `change` applied to its header, nonce or payload, the digest and length recomputed and signed by
    /// `key`: an authentic entry that breaks a rule of the format, as a writer holding the key could make one.
    func forged(
        by key: SigningKey,
        _ change: (_ header: inout EntryHeader, _ nonce: inout [UInt8], _ payload: inout [UInt8]) -> Void
    ) -> SealedEntry {
        var header = self.header
        var nonce = self.nonce
        var payload = self.payload
        change(&header, &nonce, &payload)
        header.payloadLength = UInt32(payload.count)
        let digest = SealedEntry.payloadDigest(nonce: nonce, payload: payload)
        let hash = SealedEntry.entryHash(header: header.encoded, payloadDigest: digest)
        let signature = try! key.privateKey.signature(for: SealedEntry.signedMessage(entryHash: hash))
        return SealedEntry(
            header: header,
            payloadDigest: digest,
            nonce: nonce,
            payload: payload,
            signature: Array(signature)
        )
    }
}

extension ChainFixture {
    /// Replaces the entry at `index` by a forged one and re-links and re-signs every later entry (and restates later
    /// checkpoint records), so that the forged entry is the only thing wrong with the chain.
    mutating func forge(
        at index: Int,
        _ change: (_ header: inout EntryHeader, _ nonce: inout [UInt8], _ payload: inout [UInt8]) -> Void
    ) {
        entries[index] = entries[index].forged(by: signingKey, change)
        for later in (index + 1)..<entries.count {
            let previous = entries[later - 1].entryHash
            entries[later] = entries[later].forged(by: signingKey) { header, _, payload in
                header.prevHash = previous
                // A checkpoint record states its predecessor: it follows the new link.
                if header.kind == .checkpoint, header.seq > 0 {
                    let statement = SystemRecord.Checkpoint(headSeq: header.seq - 1, headHash: previous)
                    payload = SystemRecord.checkpoint(statement).canonicalPayload
                }
            }
        }
    }
}
