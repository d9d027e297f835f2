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
    /// The first held entry with a seq above `seq`, if any.
    mutating func nextHeld(after seq: UInt64) throws -> UInt64?
    /// Removal records held whose range contains `seq`.
    mutating func removals(covering seq: UInt64) throws -> [RemovalSpan]
    /// How many entries with a seq in `range` are held.
    mutating func heldCount(in range: ClosedRange<UInt64>) throws -> UInt64
}

/// Advances the contiguous head over held entries and over gaps that held removal records bridge. Pure logic
/// over a ``HeldChain``.
///
/// The head starts at the genesis. From head `(s, h)` it moves to `s + 1` when that entry is held and its
/// `prevHash` is `h`. When `s + 1` is missing, the gap runs to the next held entry `n`; it moves to `n` when held
/// removal records bridge the gap by the one rule the offline verifier applies too
/// (``ChainRules/bridge(_:bridgeHash:covering:present:)``, docs/FORMAT.md section 10 step 6, with the entries the
/// collector holds counted as present), so that a copy the collector vouches for verifies offline. The
/// acknowledged head never passes an unbridged gap.
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
        while current.seq < UInt64.max - 1 {
            let next = current.seq + 1
            if let link = try chain.link(at: next) {
                guard ChainRules.link(seq: next, prevHash: link.prevHash, after: current.seq, hash: current.hash) == nil
                else { break }
                current = CollectorHead(seq: next, hash: link.entryHash)
                continue
            }
            guard let held = try chain.nextHeld(after: next), let after = try chain.link(at: held) else { break }
            let bridged = try ChainRules.bridge(
                next...(held - 1),
                bridgeHash: after.prevHash,
                covering: { try chain.removals(covering: $0) },
                present: { try chain.heldCount(in: $0) }
            )
            guard bridged != nil else { break }
            current = CollectorHead(seq: held, hash: after.entryHash)
        }
        return current
    }
}
