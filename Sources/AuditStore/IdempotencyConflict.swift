/// An append refused because one of its events carries an idempotency key that the log (or the same append)
/// holds for a *different* event. A retry must repeat the original request: the same event byte for byte in its
/// canonical encoding, or, when neither request carried `occurredAt`, the same apart from the ingest's stamps. The
/// log never answers a different event's seq, so nothing of the append is written and the producer is told.
///
/// The description names the event's position and the seq holding the key, never the key or the events.
public struct IdempotencyConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of conflict.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case differentEvent, repeatedInAppend, cannotCompare
        }
        let base: Base
        /// The entry at ``IdempotencyConflict/seq`` carries the key with another event.
        public static let differentEvent = Code(base: .differentEvent)
        /// An earlier event of the same append carries the key with another event.
        public static let repeatedInAppend = Code(base: .repeatedInAppend)
        /// The entry at ``IdempotencyConflict/seq`` holds the key but cannot be read to compare (its data key is
        /// gone, or it was altered): refused rather than taken for a retry.
        public static let cannotCompare = Code(base: .cannotCompare)
        public var description: String { base.rawValue }
    }

    /// What conflicts.
    public var code: Code
    /// The refused event's position in the append, from 0 (a JSON Lines body's line is found from it).
    public var index: Int
    /// The entry that holds the key, when one does (not for ``Code/repeatedInAppend``).
    public var seq: UInt64?
    /// The position of the earlier event of the same append that holds the key (``Code/repeatedInAppend``).
    public var earlierIndex: Int?

    /// Creates a conflict.
    public init(_ code: Code, index: Int, seq: UInt64? = nil, earlierIndex: Int? = nil) {
        self.code = code
        self.index = index
        self.seq = seq
        self.earlierIndex = earlierIndex
    }

    public var description: String {
        let event = "event \(index + 1) of the append"
        let advice =
            "a retry must repeat the original request exactly (with its occurredAt, or without it if the original "
            + "had none); a new event needs a new idempotency key; nothing was written"
        switch code.base {
        case .differentEvent:
            return "\(event) carries the idempotency key of the entry at seq \(seq ?? 0), which is a different event: "
                + advice
        case .repeatedInAppend:
            return "\(event) carries the idempotency key of event \((earlierIndex ?? 0) + 1) of the same append, "
                + "with a different event: " + advice
        case .cannotCompare:
            return "\(event) carries the idempotency key of the entry at seq \(seq ?? 0), which cannot be read to "
                + "compare (its data key is gone, or it was altered), so it is not taken for a retry; use a new "
                + "idempotency key; nothing was written"
        }
    }
}
