extension ChainRules {
    /// Whether a removal record accounts for every entry of its range `firstSeq ... lastSeq`: each entry of the
    /// range it does not count as removed is present. In a gap nothing is present, so only a record whose `count`
    /// equals its range's size accounts for a gap (FORMAT.md, section 10 step 6); a copy that holds the range's
    /// other entries (the collector's, docs/PROTOCOL.md section 5.3) passes the number it holds as `present`.
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
    /// section 10 step 6): records that account for their whole range (``accountsForRange(firstSeq:lastSeq:count:present:)``
    /// with nothing present) cover the gap exactly, in ranges ending at or before its end, and the one covering its
    /// last seq states as `lastRemovedHash` the hash the entry after the gap links to (``link(seq:prevHash:after:hash:)``).
    /// - Parameters:
    ///   - gap: the missing seqs, before an entry (so `gap.upperBound < UInt64.max`).
    ///   - bridgeHash: the `prevHash` of the entry after the gap.
    ///   - removals: the removal records read; each must already satisfy ``removal(_:at:)``.
    /// - Returns: the indices in `removals` of the records used, in seq order.
    public static func bridge(
        _ gap: ClosedRange<UInt64>,
        bridgeHash: [UInt8],
        removals: [SystemRecord.Removal]
    ) -> [Int]? {
        let whole = removals.indices.filter {
            let removal = removals[$0]
            return accountsForRange(
                firstSeq: removal.firstSeq,
                lastSeq: removal.lastSeq,
                count: removal.count,
                present: 0
            )
        }
        var used: [Int] = []
        var cursor = gap.lowerBound
        while cursor <= gap.upperBound {
            let covering = whole.filter {
                removals[$0].firstSeq <= cursor && cursor <= removals[$0].lastSeq
                    && removals[$0].lastSeq <= gap.upperBound
            }
            guard let best = covering.max(by: { removals[$0].lastSeq < removals[$1].lastSeq }) else { return nil }
            used.append(best)
            guard removals[best].lastSeq < gap.upperBound else { break }
            cursor = removals[best].lastSeq + 1
        }
        guard let last = used.last, gap.upperBound < .max,
            link(
                seq: gap.upperBound + 1,
                prevHash: bridgeHash,
                after: removals[last].lastSeq,
                hash: removals[last].lastRemovedHash
            ) == nil
        else { return nil }
        return used
    }
}
