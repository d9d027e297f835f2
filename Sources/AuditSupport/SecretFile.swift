/// A private file read for the secret it holds (a key, a token, a password), with the one message every program
/// gives for each way it can be refused: the file's role (`what`: "token file", "TLS key file", ...) and path, and
/// for a file group or others can read, the `chmod 600` advice (``PrivateFile/unsafeAdvice(_:mode:)``).
public enum SecretFile: Sendable {
    /// Why a secret file was refused; ``description`` is the message to print.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Which way the file was refused, for callers that map it to their own error codes.
        public enum Kind: Sendable, Equatable {
            /// There is no such file.
            case missing
            /// Group or others have access to it.
            case unsafe
            /// It is not a regular file (a directory, a socket, a device).
            case notRegular
            /// The system refused to open or read it, or it is larger than allowed.
            case unreadable
            /// It does not hold what it must (one non-empty line, a 32-byte seed, ...).
            case invalid
        }

        /// Which way the file was refused.
        public var kind: Kind
        /// What went wrong and what to do, naming the file's role and path.
        public var description: String

        /// A failure of `kind` saying `description`.
        public init(_ kind: Kind, _ description: String) {
            self.kind = kind
            self.description = description
        }
    }

    /// Reads the secret file at `path`, checked as ``PrivateFile/read(_:maxBytes:)`` checks it; nil if there is no
    /// such file.
    /// - Parameters:
    ///   - what: the file's role in messages, e.g. `"token file"`.
    ///   - maxBytes: the largest file read.
    /// - Throws: ``Failure`` (never ``Failure/Kind/missing``) if the file is unsafe, not a regular file, unreadable
    ///   or too large.
    public static func readIfPresent(_ path: String, what: String, maxBytes: Int) throws(Failure) -> [UInt8]? {
        do {
            return try PrivateFile.read(path, maxBytes: maxBytes)
        } catch {
            switch error {
            case .unsafe(let mode):
                throw Failure(.unsafe, "\(what) \(path) " + PrivateFile.unsafeAdvice(path, mode: mode))
            case .notRegular:
                throw Failure(.notRegular, "\(what) \(path) is not a regular file")
            case .io(let reason):
                throw Failure(.unreadable, "cannot read \(what) \(path) (\(reason))")
            case .exists:
                // Reading never reports an existing file; kept exhaustive.
                throw Failure(.unreadable, "cannot read \(what) \(path)")
            }
        }
    }

    /// Reads the secret file at `path`, which must exist.
    /// - Throws: ``Failure``, ``Failure/Kind/missing`` saying `cannot open <what> <path>: no such file`.
    public static func read(_ path: String, what: String, maxBytes: Int) throws(Failure) -> [UInt8] {
        guard let bytes = try readIfPresent(path, what: what, maxBytes: maxBytes) else {
            throw Failure(.missing, "cannot open \(what) \(path): no such file")
        }
        return bytes
    }
}
