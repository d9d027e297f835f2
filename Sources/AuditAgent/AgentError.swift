/// A failure of the agent (configuration, token file, state directory, listeners), with what to do about it.
public struct AgentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case invalidConfiguration, unsafeTokenFile, stateDirectory, cannotListen
        }
        let base: Base
        /// A setting is missing, unknown or malformed (file, environment or flag).
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// The token file is readable by group or others, missing or empty.
        public static let unsafeTokenFile = Code(base: .unsafeTokenFile)
        /// The state directory, its log or its keys cannot be opened or created.
        public static let stateDirectory = Code(base: .stateDirectory)
        /// A listener cannot be set up (socket in use, bad address).
        public static let cannotListen = Code(base: .cannotListen)
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
