/// Why the read API cannot answer what was asked of a log's tree (docs/COLLECTOR-API.md section 2): the resource
/// does not exist (yet), the request is out of range, or an entry bundle cannot hold an entry.
public struct TreeReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case unknownLog, notHeld, notInTreeYet, notALeaf, beyondTree, invalidRange, entryTooLarge
        }
        let base: Base
        /// The collector holds no entry of the log.
        public static let unknownLog = Code(base: .unknownLog)
        /// The collector does not hold the entry at that seq.
        public static let notHeld = Code(base: .notHeld)
        /// The entry is held but the tree does not reach its seq yet (a gap before it is still open).
        public static let notInTreeYet = Code(base: .notInTreeYet)
        /// The entry was accepted after the tree had passed its seq (inside a gap a removal record bridged): it is
        /// held, and never a leaf.
        public static let notALeaf = Code(base: .notALeaf)
        /// The tile, bundle or tree size asked for is beyond the log's tree.
        public static let beyondTree = Code(base: .beyondTree)
        /// The sizes of a consistency proof are out of order.
        public static let invalidRange = Code(base: .invalidRange)
        /// An entry bundle would hold an entry longer than its uint16 length prefix holds.
        public static let entryTooLarge = Code(base: .entryTooLarge)
        /// The code as the read API's JSON errors name it (`"reason"`).
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
