import Crypto

/// The chain's validity rules (docs/FORMAT.md), in one place: which entry may follow which, what a genesis must
/// be, what the records that state a position must state, and how a gap in the sequence numbers is bridged.
///
/// Pure functions over headers and records. The verifier (``ChainVerifier``), the collector's ingest decision and
/// the device's append path all ask these, so a rule, and the sentence that refuses it, changes here only. Each
/// function returns the first rule the input breaks, or nil; it says nothing about signatures, keys or payload
/// layout, which their own types check.
public enum ChainRules: Sendable {
    /// Whether an entry belongs to the log `logId`: the log id is the same in every entry (FORMAT.md, section 4).
    public static func sameLog(_ header: EntryHeader, as logId: [UInt8]) -> Violation? {
        header.logId == logId ? nil : .otherLog(found: header.logId, expected: logId)
    }

    /// Whether the entry at `seq` whose header states `prevHash` may follow the entry at `previousSeq` whose
    /// entry hash is `previousHash`: its seq is the next one, and its `prevHash` is that entry's hash
    /// (FORMAT.md, sections 1 and 4). The entry before it may also be a removal record's last removed entry
    /// (`lastSeq` and `lastRemovedHash`, section 8.3), which is how a record bridges a gap.
    /// - Parameters:
    ///   - seq: the sequence number of the later entry.
    ///   - prevHash: its header's previous hash.
    ///   - previousSeq: the sequence number of the entry it should follow.
    ///   - previousHash: that entry's hash.
    public static func link(
        seq: UInt64,
        prevHash: [UInt8],
        after previousSeq: UInt64,
        hash previousHash: [UInt8]
    ) -> Violation? {
        // Written so that no sum overflows: nothing follows seq 2^64 - 1 (section 10, "Extreme values").
        guard previousSeq < .max, seq == previousSeq + 1 else { return .wrongSeq(seq: seq, previousSeq: previousSeq) }
        return prevHash == previousHash ? nil : .brokenLink(seq: seq, previousSeq: previousSeq)
    }

    /// Whether an entry may follow `previous` (nil: it is the first entry of the log): the same log, the next seq,
    /// the previous entry's hash as `prevHash` and, for the first entry, a genesis (FORMAT.md, sections 1, 4, 6
    /// and 8.3). What a writer checks before it stores an entry after its head.
    public static func successor(_ header: EntryHeader, of previous: ChainHead?) -> Violation? {
        guard let previous else {
            guard header.seq == 0 else { return .wrongSeq(seq: header.seq, previousSeq: nil) }
            return genesis(header)
        }
        return sameLog(header, as: previous.logId)
            ?? link(seq: header.seq, prevHash: header.prevHash, after: previous.seq, hash: previous.hash)
            ?? placement(header)
    }

    /// Whether the record kind fits the seq: a genesis only at seq 0, and seq 0 only a genesis (FORMAT.md,
    /// sections 6, 8.3 and 10 step 5).
    public static func placement(_ header: EntryHeader) -> Violation? {
        switch (header.seq == 0, header.kind == .genesis) {
        case (true, false): .notGenesisAtZero(kind: header.kind)
        case (false, true): .genesisNotAtZero(seq: header.seq)
        default: nil
        }
    }

    /// What a genesis header must be: kind genesis at seq 0, with an all-zero `prevHash` (FORMAT.md, sections 4
    /// and 8.3). Its all-zero nonce and data key id are the rule of every system record (section 3).
    public static func genesis(_ header: EntryHeader) -> Violation? {
        guard header.kind == .genesis else { return .notGenesisAtZero(kind: header.kind) }
        guard header.seq == 0 else { return .genesisNotAtZero(seq: header.seq) }
        return header.prevHash.allSatisfy { $0 == 0 } ? nil : .genesisPrevHashNotZero
    }

    /// What a genesis must be, header and record: ``genesis(_:)``, and the record states the header's log id and
    /// the signing public key whose key id the header names (FORMAT.md, section 8.3).
    public static func genesis(_ record: SystemRecord.Genesis, header: EntryHeader) -> Violation? {
        if let violation = genesis(header) { return violation }
        guard record.logId == header.logId else { return .genesisOtherLog(stated: record.logId, header: header.logId) }
        guard let key = introducedKey(.genesis(record)), KeyID.signing(key) == header.signingKeyId
        else { return .genesisKeyMismatch(keyId: header.signingKeyId) }
        return nil
    }

    /// What a checkpoint record must state: the seq and hash of the entry before it, that is `seq - 1` and its own
    /// `prevHash` (FORMAT.md, section 8.3).
    public static func checkpoint(_ statement: SystemRecord.Checkpoint, header: EntryHeader) -> Violation? {
        guard header.seq > 0, statement.headSeq == header.seq - 1, statement.headHash == header.prevHash else {
            return .checkpointOtherHead
        }
        return nil
    }

    /// What a removal record (accounted removal or retention prune) must state about its place: a range of
    /// entries before it, `lastSeq < seq` (FORMAT.md, section 8.3).
    /// - Parameters:
    ///   - removal: the record.
    ///   - recordSeq: the seq of the record itself.
    public static func removal(_ removal: SystemRecord.Removal, at recordSeq: UInt64) -> Violation? {
        removal.lastSeq < recordSeq ? nil : .removalNotEarlier(recordSeq: recordSeq, lastSeq: removal.lastSeq)
    }
}
