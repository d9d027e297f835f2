/// A failure of the log store, keys or state directory, with what to do about it.
public struct LogStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case notInitialized, alreadyInitialized, storage, unsafeKeyPermissions, missingKey, invalidKey
            case corruptState, invalidInput, held
        }
        let base: Base
        /// The state directory holds no log: run `auditctl init`.
        public static let notInitialized = Code(base: .notInitialized)
        /// `init` on a directory that already holds a log.
        public static let alreadyInitialized = Code(base: .alreadyInitialized)
        /// SQLite or the file system failed.
        public static let storage = Code(base: .storage)
        /// A key file is readable by group or others.
        public static let unsafeKeyPermissions = Code(base: .unsafeKeyPermissions)
        /// A key file the log needs is absent.
        public static let missingKey = Code(base: .missingKey)
        /// A key file has the wrong size or does not match its id.
        public static let invalidKey = Code(base: .invalidKey)
        /// The stored state contradicts itself (metadata and chain disagree).
        public static let corruptState = Code(base: .corruptState)
        /// A caller passed something the store cannot accept.
        public static let invalidInput = Code(base: .invalidInput)
        /// A legal hold is in force: erasures are refused (docs/FORMAT.md, section 13.9).
        public static let held = Code(base: .held)
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
