/// Settles which version 2 entries a signature covers (docs/FORMAT.md, section 13.1), before the analyzer reads
/// them in order.
///
/// A version 2 entry without a signature of its own is authentic when a later entry that carries a valid signature
/// by the same key is reached from it through unbroken links (each next seq, each `prevHash` the hash before it).
/// Entries wait here until that signature arrives (they become `valid`) or until the run breaks: another key or
/// log, a seq or link that does not follow, a version 1 or damaged entry, more than
/// ``FormatConstants/maxUnsignedRun`` entries, the end of the copy (they become `uncovered`, and the analyzer
/// reports each as `unsealed`, or as `headerModified` when the next entry does not link to it). Entries with a
/// signature of their own keep their status. Memory is bounded by the longest run.
struct SignatureCoverage: Sendable {
    private var held: [ExaminedEntry] = []

    /// Adds the next entry in storage order; returns the entries whose status is now settled, in order.
    mutating func add(_ entry: ExaminedEntry) -> [ExaminedEntry] {
        guard let header = entry.header, header.version == FormatConstants.version2 else {
            return close() + [entry]
        }
        var settled: [ExaminedEntry] = []
        if let last = held.last, !Self.continues(last, with: entry) { settled = close() }
        held.append(entry)
        if header.carriesSignature, entry.signature == .valid {
            settled += held.map { $0.signature == .unchecked ? $0.with(.valid) : $0 }
            held.removeAll(keepingCapacity: true)
        } else if held.count > FormatConstants.maxUnsignedRun {
            settled += close()
        }
        return settled
    }

    /// Ends the run: the entries waiting are not covered. Returns them, settled.
    mutating func close() -> [ExaminedEntry] {
        guard !held.isEmpty else { return [] }
        defer { held.removeAll(keepingCapacity: true) }
        return held.map { $0.signature == .unchecked ? $0.with(.uncovered) : $0 }
    }

    /// Whether `next` continues the run after `last`: the same log and key, the next seq, a link to its hash.
    private static func continues(_ last: ExaminedEntry, with next: ExaminedEntry) -> Bool {
        guard let previous = last.header, let header = next.header else { return false }
        return CoveringRun.continues(header, after: previous, hash: last.hash)
    }
}
