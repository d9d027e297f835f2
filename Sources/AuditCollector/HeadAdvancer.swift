import AuditChain

/// The collector's contiguous head of a log: every entry up to `seq` is held or accounted for by a removal
/// record, and the entry at `seq` has hash `hash`.
public struct CollectorHead: Sendable, Hashable {
    /// Sequence number of the head.
    public var seq: UInt64
    /// Entry hash at `seq` (for a head reached through a removal record, its `lastRemovedHash`).
    public var hash: [UInt8]

    /// Creates a head.
    public init(seq: UInt64, hash: [UInt8]) {
        self.seq = seq
        self.hash = hash
    }
}

/// What the head advancement reads from the entries the collector holds for one log.
public protocol HeldChain {
    /// The held entry at `seq` (hash and prevHash), if any.
    mutating func link(at seq: UInt64) throws -> (entryHash: [UInt8], prevHash: [UInt8])?
    /// Removal records held whose range contains `seq`.
    mutating func removals(covering seq: UInt64) throws -> [RemovalSpan]
    /// How many entries with a seq in `range` are held.
    mutating func heldCount(in range: ClosedRange<UInt64>) throws -> UInt64
}

/// Advances the contiguous head over held entries and over gaps that held removal records bridge. Pure logic
/// over a ``HeldChain``.
///
/// The head starts at the genesis. From head `(s, h)` it moves to `s + 1` when that entry is held and its
/// `prevHash` is `h`. When `s + 1` is missing, a removal record whose range `firstSeq ... lastSeq` contains
/// `s + 1` moves it to `(lastSeq, lastRemovedHash)`, provided every entry of the range the record does not count
/// as removed is held, and the entry at `lastSeq + 1` is held and links to `lastRemovedHash` — or is missing
/// too, removed later and accounted by a later record (adjacent runs sealed at different times). Such a chain
/// of bridges counts only once a held entry links to its end; otherwise the head stays where a held entry last
/// confirmed it. The acknowledged head never passes an unbridged gap.
public enum HeadAdvancer: Sendable {
    /// The furthest head reachable from `head` (nil: no genesis held yet).
    /// - Throws: whatever reading `chain` throws.
    public static func advance(_ head: CollectorHead?, in chain: inout some HeldChain) throws -> CollectorHead? {
        var current: CollectorHead
        if let head {
            current = head
        } else {
            guard let genesis = try chain.link(at: 0) else { return nil }
            current = CollectorHead(seq: 0, hash: genesis.entryHash)
        }
        // The last head a held entry confirmed; a bridge onto another gap is passed provisionally.
        var confirmed = current
        while current.seq < UInt64.max - 1 {
            let next = current.seq + 1
            if let link = try chain.link(at: next) {
                guard ChainRules.link(seq: next, prevHash: link.prevHash, after: current.seq, hash: current.hash) == nil
                else { break }
                current = CollectorHead(seq: next, hash: link.entryHash)
                confirmed = current
                continue
            }
            guard let bridge = try bridge(from: next, in: &chain) else { break }
            current = CollectorHead(seq: bridge.lastSeq, hash: bridge.lastRemovedHash)
        }
        return confirmed
    }

    /// The removal record that bridges the gap starting at `missing`: the one reaching furthest whose next entry
    /// is held and links to it, else the one reaching furthest whose next entry is missing too (provisional).
    private static func bridge(from missing: UInt64, in chain: inout some HeldChain) throws -> RemovalSpan? {
        let candidates = try chain.removals(covering: missing).sorted { $0.lastSeq > $1.lastSeq }
        var provisional: RemovalSpan?
        for span in candidates where span.lastSeq >= missing && span.lastSeq < UInt64.max {
            // The entries of the range the record does not count as removed must be held (counted only when needed).
            let whole = span.accountsForRange(present: 0)
            if !whole, try !span.accountsForRange(present: chain.heldCount(in: span.firstSeq...span.lastSeq)) {
                continue
            }
            guard let after = try chain.link(at: span.lastSeq + 1) else {
                provisional = provisional ?? span
                continue
            }
            let linked = ChainRules.link(
                seq: span.lastSeq + 1,
                prevHash: after.prevHash,
                after: span.lastSeq,
                hash: span.lastRemovedHash
            )
            if linked == nil { return span }
        }
        return provisional
    }
}

extension RemovalSpan {
    /// ``ChainRules/accountsForRange(firstSeq:lastSeq:count:present:)`` for this span.
    fileprivate func accountsForRange(present: UInt64) -> Bool {
        ChainRules.accountsForRange(firstSeq: firstSeq, lastSeq: lastSeq, count: count, present: present)
    }
}
