/// A key file or a published key that cannot be read: what is wrong with it, in one sentence.
public struct KeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
