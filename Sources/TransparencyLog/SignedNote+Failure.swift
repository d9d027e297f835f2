extension SignedNote {
    /// Why a note is refused: malformed bytes (c2sp.org/signed-note "Format"), or signatures that do not let a
    /// verifier trust the text (section "Signatures"). Lines are numbered from 1 among the signature lines; `nil` when
    /// the signature was built rather than read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The note is larger than the parser's limit.
        case tooLarge(size: Int, limit: Int)
        /// The note is not valid UTF-8.
        case notUTF8
        /// The note holds an ASCII control character other than newline (a tab, a carriage return, a NUL...).
        case controlCharacter
        /// The note does not end in newline.
        case notNewlineTerminated
        /// The text to sign does not end in newline.
        case textNotNewlineTerminated
        /// There is no blank line between the text and the signatures.
        case missingBlankLine
        /// There is no signature line after the last blank line.
        case noSignatures
        /// More signature lines than the parser's limit.
        case tooManySignatures(count: Int, limit: Int)
        /// A signature line is not `— <key name> <signature>`.
        case malformedSignatureLine(line: Int)
        /// A signature line's key name is empty or holds a space, a plus or a control character.
        case invalidKeyName(line: Int?)
        /// A signature is not canonical standard base64.
        case malformedSignature(line: Int)
        /// A signature has no bytes after its 4-byte key ID.
        case signatureTooShort(line: Int?)
        /// A signature whose key name and ID are those of a known key does not verify: the whole note is refused.
        case badSignature(keyName: String, keyID: UInt32)
        /// No signature is from a known key.
        case noKnownSignature
        /// Two different known keys share a name and a key ID: their signatures could not be told apart.
        case ambiguousKeys(keyName: String, keyID: UInt32)
        /// Ed25519 signing failed.
        case signingFailed

        public var description: String {
            switch self {
            case .tooLarge(let size, let limit): "the note is \(size) bytes, more than the limit of \(limit)"
            case .notUTF8: "the note is not valid UTF-8"
            case .controlCharacter: "the note holds a control character other than newline"
            case .notNewlineTerminated: "the note does not end in a newline"
            case .textNotNewlineTerminated: "a note's text must end in a newline"
            case .missingBlankLine: "the note has no blank line before its signatures"
            case .noSignatures: "the note has no signature lines"
            case .tooManySignatures(let count, let limit):
                "the note has \(count) signature lines, more than the limit of \(limit)"
            case .malformedSignatureLine(let line):
                "signature line \(line) is not '\u{2014} <key name> <base64 signature>'"
            case .invalidKeyName(let line):
                "\(Self.at(line))the key name must be non-empty with no spaces, '+' or control characters"
            case .malformedSignature(let line): "signature line \(line): the signature is not canonical base64"
            case .signatureTooShort(let line): "\(Self.at(line))the signature has no bytes after its key ID"
            case .badSignature(let name, let keyID):
                "the signature of known key \(name) (\(NoteEncoding.hex32(keyID))) does not verify: refuse the note"
            case .noKnownSignature: "no signature on the note is from a known key"
            case .ambiguousKeys(let name, let keyID):
                "two different known keys are named \(name) with key ID \(NoteEncoding.hex32(keyID)); keep one"
            case .signingFailed: "Ed25519 signing failed"
            }
        }

        static func at(_ line: Int?) -> String { line.map { "signature line \($0): " } ?? "" }
    }
}
