/// What the gap rule reads of a removal record (accounted removal or retention prune, FORMAT.md section 8.3): its
/// range, how many entries of it left, and the hash of the entry at its last seq.
public protocol RemovalRange {
    /// First sequence number of the range.
    var firstSeq: UInt64 { get }
    /// Last sequence number of the range.
    var lastSeq: UInt64 { get }
    /// How many entries of the range the record says left.
    var count: UInt64 { get }
    /// Entry hash of the entry at `lastSeq`.
    var lastRemovedHash: [UInt8] { get }
}

extension SystemRecord.Removal: RemovalRange {}

extension ChainRules {
    /// Whether a removal record accounts for every entry of its range `firstSeq ... lastSeq` that a copy lacks:
    /// the record says `count` entries of the range left, so a copy that holds `present` of them may lack at most
    /// `count` (`count + present` reaches the range's size). Which ones is not stated: a record of entries that
    /// left delivery excuses the absence of any `count` of its range (FORMAT.md, section 10 step 6).
    /// - Parameters:
    ///   - firstSeq: the record's first seq.
    ///   - lastSeq: the record's last seq.
    ///   - count: how many entries of the range the record says were removed.
    ///   - present: how many entries of the range the copy holds.
    public static func accountsForRange(firstSeq: UInt64, lastSeq: UInt64, count: UInt64, present: UInt64) -> Bool {
        guard firstSeq <= lastSeq, count > 0 else { return false }
        // count + present >= lastSeq - firstSeq + 1, without overflow.
        let (sum, overflow) = (count - 1).addingReportingOverflow(present)
        return overflow || sum >= lastSeq - firstSeq
    }

    /// The removal records that bridge the gap `gap` of a copy of the log, or nil when they do not (FORMAT.md,
    /// section 10 step 6; docs/PROTOCOL.md section 5.3). The one rule the verifier and the collector's head apply:
    ///
    /// 1. From the gap's first seq on, the record covering the current seq whose range reaches furthest is taken,
    ///    among those that account for their range (``accountsForRange(firstSeq:lastSeq:count:present:)``, with
    ///    the entries of the range the copy holds as `present`); then the seq after its range, until the gap's
    ///    last seq is covered. A seq no such record covers leaves the gap unbridged.
    /// 2. When a record's range ends exactly at the gap's last seq, the entry after the gap must link to it: its
    ///    `prevHash` is the record's `lastRemovedHash` (``link(seq:prevHash:after:hash:)``). When the range reaches
    ///    past the gap, the entry after the gap is itself inside the range (a removed entry the copy holds after
    ///    all, such as one the collector stored while its answer was lost) and its predecessor left: there is no
    ///    hash to compare.
    /// - Parameters:
    ///   - gap: the missing seqs, before an entry (so `gap.upperBound < UInt64.max`).
    ///   - bridgeHash: the `prevHash` of the entry after the gap; nil when that entry is damaged, so that a link
    ///     the rule needs fails.
    ///   - covering: the removal records whose range contains a seq; each must already satisfy
    ///     ``removal(_:at:)``.
    ///   - present: how many entries with a seq in a range the copy holds.
    /// - Returns: the records used, in seq order.
    public static func bridge<Record: RemovalRange>(
        _ gap: ClosedRange<UInt64>,
        bridgeHash: [UInt8]?,
        covering: (UInt64) throws -> [Record],
        present: (ClosedRange<UInt64>) throws -> UInt64
    ) rethrows -> [Record]? {
        guard gap.upperBound < .max else { return nil }
        var used: [Record] = []
        var cursor = gap.lowerBound
        while true {
            var best: Record?
            for record in try covering(cursor)
            where record.firstSeq <= cursor && cursor <= record.lastSeq && record.lastSeq < .max {
                // Only a record that would reach further (or end the gap with a link) is worth counting for.
                if let best, !reachesFurther(record, than: best, gapEnd: gap.upperBound, bridgeHash: bridgeHash) {
                    continue
                }
                let held = try present(record.firstSeq...record.lastSeq)
                guard
                    accountsForRange(
                        firstSeq: record.firstSeq,
                        lastSeq: record.lastSeq,
                        count: record.count,
                        present: held
                    )
                else { continue }
                best = record
            }
            guard let best else { return nil }
            used.append(best)
            if best.lastSeq >= gap.upperBound {
                return best.lastSeq > gap.upperBound || links(best, to: gap.upperBound, bridgeHash: bridgeHash)
                    ? used : nil
            }
            cursor = best.lastSeq + 1
        }
    }

    /// Whether `candidate` is a better bridge than `best`: it reaches further, or it ends the gap exactly where
    /// `best` does and links to the entry after it while `best` does not.
    private static func reachesFurther<Record: RemovalRange>(
        _ candidate: Record,
        than best: Record,
        gapEnd: UInt64,
        bridgeHash: [UInt8]?
    ) -> Bool {
        if candidate.lastSeq != best.lastSeq { return candidate.lastSeq > best.lastSeq }
        return candidate.lastSeq == gapEnd && !links(best, to: gapEnd, bridgeHash: bridgeHash)
            && links(candidate, to: gapEnd, bridgeHash: bridgeHash)
    }

    /// Whether the entry after `gapEnd`, whose `prevHash` is `bridgeHash`, links to the record's last removed entry.
    private static func links<Record: RemovalRange>(_ record: Record, to gapEnd: UInt64, bridgeHash: [UInt8]?) -> Bool {
        guard let bridgeHash, gapEnd < .max else { return false }
        return link(seq: gapEnd + 1, prevHash: bridgeHash, after: record.lastSeq, hash: record.lastRemovedHash) == nil
    }
}
