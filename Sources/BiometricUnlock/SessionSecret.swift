/// The session secret released by an unlock; its description and mirror never show the bytes.
public struct SessionSecret: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The secret; the app should ``wipe()`` it once it has used it.
    public private(set) var bytes: [UInt8]

    /// Wraps bytes (taking ownership of them).
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Overwrites the bytes (see ``SecureWipe`` for the limits).
    public mutating func wipe() {
        SecureWipe.wipe(&bytes)
    }

    /// Redacted.
    public var description: String { "SessionSecret(\(bytes.count) bytes, redacted)" }

    /// Redacted.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
