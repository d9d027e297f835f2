/// The copies of an entry's header fields that a storage keeps beside it to answer queries without parsing (the
/// SQLite log's `hash`, `kind` and `time` columns). Nothing signs them: the verifier checks them against the entry
/// bytes and reports a disagreement as ``VerificationReport/Finding/Kind/lookupMismatch``.
public struct StoredLookup: Sendable, Hashable {
    /// The entry hash as stored; nil when the storage holds something else than bytes there.
    public var hash: [UInt8]?
    /// The record kind's number as stored (not necessarily a known kind); nil when it is not an integer.
    public var kind: Int64?
    /// The sealing time as stored, in milliseconds since the epoch; nil when it is not an integer.
    public var time: Int64?

    /// Creates the stored copies.
    public init(hash: [UInt8]?, kind: Int64?, time: Int64?) {
        self.hash = hash
        self.kind = kind
        self.time = time
    }

    /// What disagrees with the entry whose header is `header` and whose hash is `entryHash`, or nil.
    func mismatch(header: EntryHeader, entryHash: [UInt8]) -> String? {
        var differences: [String] = []
        if hash != entryHash {
            let stored = hash.map { Hex.encode($0) } ?? "not a blob"
            differences.append("hash \(stored), but the entry hashes to \(Hex.encode(entryHash))")
        }
        if kind != Int64(header.kind.rawValue) {
            let stored = kind.map { "\($0)" } ?? "not an integer"
            differences.append("kind \(stored), but the entry is a \(header.kind) (\(header.kind.rawValue))")
        }
        if time != header.time.millisecondsSinceEpoch {
            let stored = time.map { "\($0)" } ?? "not an integer"
            differences.append("time \(stored), but the entry was sealed at \(header.time.millisecondsSinceEpoch)")
        }
        guard !differences.isEmpty else { return nil }
        return "the storage's lookup columns beside the entry say " + differences.joined(separator: "; ")
    }
}
