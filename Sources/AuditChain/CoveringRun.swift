public import Crypto

/// An entry together with the entries after it up to the one whose signature covers it (docs/FORMAT.md, section
/// 13.1): what a single format version 2 entry needs to be checked alone, as in a proof file (docs/PROOFS.md). A
/// version 1 entry, or a version 2 entry that carries a signature, is a run of one.
public enum CoveringRun: Sendable {
    /// Whether `next` continues a run after `previous`, whose entry hash is `previousHash`: the same log and key,
    /// the next seq, a link to that hash (the coverage rule of section 13.1, which ``SignatureCoverage`` and the
    /// collector's ingest apply too).
    public static func continues(_ next: EntryHeader, after previous: EntryHeader, hash previousHash: [UInt8]) -> Bool {
        next.logId == previous.logId && next.signingKeyId == previous.signingKeyId && previous.seq < .max
            && next.seq == previous.seq + 1 && next.prevHash == previousHash
    }

    /// The serialized entries from the first through the first one after it that carries a signature (the first alone
    /// when it carries one); all of them when none does.
    public static func prefixUpToSignature(_ entries: [[UInt8]]) -> [[UInt8]] {
        guard let first = entries.first, !SealedEntry.carriesSignature(serialized: first) else {
            return Array(entries.prefix(1))
        }
        guard let signed = entries.dropFirst().firstIndex(where: { SealedEntry.carriesSignature(serialized: $0) })
        else {
            return entries
        }
        return Array(entries[...signed])
    }

    /// The bytes of a run: its serialized entries one after the other (each entry's header gives its length).
    public static func serialize(_ entries: [[UInt8]]) -> [UInt8] {
        entries.flatMap { $0 }
    }

    /// Splits concatenated entries: the first, then those after it (at most ``FormatConstants/maxUnsignedRun``).
    /// - Throws: ``AuditChainError`` when the bytes are not whole entries one after the other.
    public static func parse(_ bytes: [UInt8]) throws(AuditChainError) -> [SealedEntry] {
        var entries: [SealedEntry] = []
        var offset = 0
        while offset < bytes.count {
            guard entries.count <= FormatConstants.maxUnsignedRun else {
                throw AuditChainError(.malformedEntry, "more than \(FormatConstants.maxUnsignedRun) entries in a run")
            }
            let rest = Array(bytes[offset...])
            guard rest.count >= FormatConstants.headerSize else {
                throw AuditChainError(.malformedEntry, "\(rest.count) bytes after the last whole entry")
            }
            let header = try EntryHeader(decoding: Array(rest.prefix(FormatConstants.headerSize)))
            let size = SealedEntry.serializedSize(header)
            guard size <= rest.count else {
                throw AuditChainError(.malformedEntry, "an entry announces \(size) bytes, \(rest.count) are left")
            }
            entries.append(try SealedEntry(serialized: Array(rest.prefix(size))))
            offset += size
        }
        return entries
    }

    /// Whether `key` covers the run's first entry: it signed the first entry itself, or every entry after it
    /// continues the run up to a last one that `key` signed (unsigned entries between), and nothing follows that.
    public static func isCovered(_ entries: [SealedEntry], by key: Curve25519.Signing.PublicKey) -> Bool {
        guard let first = entries.first else { return false }
        if first.header.carriesSignature { return entries.count == 1 && first.isSigned(by: key) }
        for index in entries.indices.dropFirst() {
            let previous = entries[index - 1]
            guard !previous.header.carriesSignature,
                continues(entries[index].header, after: previous.header, hash: previous.entryHash)
            else { return false }
        }
        guard let last = entries.last, entries.count > 1, last.header.carriesSignature else { return false }
        return last.isSigned(by: key)
    }
}
