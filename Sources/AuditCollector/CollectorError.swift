/// A failure of the collector (configuration, key file, storage), with what to do about it.
public struct CollectorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case invalidConfiguration, unsafeKeyPermissions, invalidKey, storage, corruptState
        }
        let base: Base
        /// A setting is missing or wrong (listen address, trust file, ...).
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// The collector key file is readable by group or others.
        public static let unsafeKeyPermissions = Code(base: .unsafeKeyPermissions)
        /// The collector key file does not hold a 32-byte Ed25519 seed.
        public static let invalidKey = Code(base: .invalidKey)
        /// SQLite or the file system failed.
        public static let storage = Code(base: .storage)
        /// The database holds something this version does not understand.
        public static let corruptState = Code(base: .corruptState)
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
