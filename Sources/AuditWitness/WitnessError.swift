/// A failure of the witness (configuration, key file, storage), with what to do about it.
public struct WitnessError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case invalidConfiguration, unsafeKeyPermissions, invalidKey, storage
        }
        let base: Base
        /// A setting is missing or wrong (listen address, name, log key file).
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// The witness key file is readable by group or others.
        public static let unsafeKeyPermissions = Code(base: .unsafeKeyPermissions)
        /// The witness key file does not hold a 32-byte Ed25519 seed.
        public static let invalidKey = Code(base: .invalidKey)
        /// SQLite or the file system failed.
        public static let storage = Code(base: .storage)
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
