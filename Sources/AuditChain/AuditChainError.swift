/// An operation of the chain library that cannot proceed, with what to do about it.
public struct AuditChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case invalidKey, malformedEntry, malformedRecord, payloadTooLarge, decryptionFailed, chainMismatch
        }
        let base: Base
        /// Key bytes of the wrong size or shape.
        public static let invalidKey = Code(base: .invalidKey)
        /// Entry bytes that do not follow the layout.
        public static let malformedEntry = Code(base: .malformedEntry)
        /// A system record payload that does not follow its layout.
        public static let malformedRecord = Code(base: .malformedRecord)
        /// A payload over the format's limit.
        public static let payloadTooLarge = Code(base: .payloadTooLarge)
        /// AES-GCM refused to open a payload (wrong key, or altered header, nonce or ciphertext).
        public static let decryptionFailed = Code(base: .decryptionFailed)
        /// The operation does not fit the chain's state (wrong log, key or position).
        public static let chainMismatch = Code(base: .chainMismatch)
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// Details.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (\(code))" }
}
