public import AuditChain

/// A stored entry with the copies of its header fields the storage keeps beside it, as read for verification.
public struct VerifiableEntry: Sendable, Hashable {
    /// The entry as stored.
    public var entry: StoredEntry
    /// The lookup columns beside it; nil when the storage keeps none.
    public var lookup: StoredLookup?

    /// Creates a verifiable entry.
    public init(entry: StoredEntry, lookup: StoredLookup?) {
        self.entry = entry
        self.lookup = lookup
    }
}

/// A storage that keeps copies of header fields beside each entry to answer queries without parsing (the SQLite
/// log's `hash`, `kind` and `time` columns): ``LogStorage/verify(options:progressInterval:progress:)`` reads them
/// with the entries and has the verifier check them against the entry bytes.
public protocol LookupColumnStorage: LogStorage {
    /// Up to `limit` entries with `from <= seq <= through`, in sequence order, each with its lookup columns.
    func verifiableEntries(from: UInt64, through: UInt64, limit: Int) throws -> [VerifiableEntry]
}
