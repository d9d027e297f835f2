/// A transparency log checkpoint (c2sp.org/tlog-checkpoint@v1.0.0): the note text
/// `<origin>\n<tree size>\n<base64 root hash>\n` followed by optional extension lines, each ending in newline.
///
/// ``init(parsing:)`` is strict and total, and what it accepts ``text`` renders back byte for byte. A signed
/// checkpoint is a ``SignedNote`` whose text is a checkpoint; ``init(signedNote:origin:keys:)`` checks one.
public struct Checkpoint: Sendable, Equatable {
    /// Why a checkpoint is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text does not end in newline.
        case notNewlineTerminated
        /// Fewer than the three lines origin, size and root hash.
        case tooFewLines(Int)
        /// An empty line (1-based), where every line must be non-empty ("Note text").
        case emptyLine(Int)
        /// The origin, or an extension line, holds a newline or another control character.
        case invalidLine
        /// The tree size is not a decimal without leading zeros that fits a `UInt64`.
        case malformedSize
        /// The root hash is not canonical standard base64 of 32 bytes.
        case malformedRootHash
        /// The note around the checkpoint is malformed, or not signed as it must be.
        case note(SignedNote.Failure)
        /// The checkpoint's origin is not the one expected.
        case originMismatch(expected: String, found: String)

        public var description: String {
            switch self {
            case .notNewlineTerminated: "a checkpoint must end in a newline"
            case .tooFewLines(let count): "a checkpoint has at least 3 lines (origin, size, root hash), not \(count)"
            case .emptyLine(let line): "checkpoint line \(line) is empty"
            case .invalidLine: "a checkpoint's origin and extension lines cannot hold newlines or control characters"
            case .malformedSize: "the tree size is not a decimal without leading zeros that fits 64 bits"
            case .malformedRootHash: "the root hash is not the standard base64 of 32 bytes"
            case .note(let failure): "the checkpoint's note: \(failure)"
            case .originMismatch(let expected, let found): "the checkpoint is from \(found), not \(expected)"
            }
        }
    }

    /// The log's identity; non-empty (section "Note text", item 1). The spec recommends, and does not require, a
    /// schema-less URL with no spaces and no plus, so any other non-empty line is accepted.
    public let origin: String
    /// Leaves in the tree (item 2).
    public let size: UInt64
    /// The RFC 6962 root hash of the tree at ``size``, 32 bytes (item 3).
    public let rootHash: [UInt8]
    /// Opaque extension lines, without their newlines; each non-empty (item 4). Not recommended by the spec.
    public let extensions: [String]

    /// A checkpoint of these parts.
    ///
    /// - Throws: ``Failure/emptyLine(_:)`` for an empty origin or extension, ``Failure/invalidLine`` for one that
    ///   holds a newline or a control character, ``Failure/malformedRootHash`` for a root that is not 32 bytes.
    public init(origin: String, size: UInt64, rootHash: [UInt8], extensions: [String] = []) throws(Failure) {
        for (number, line) in ([origin] + extensions).enumerated() {
            guard !line.isEmpty else { throw .emptyLine(number == 0 ? 1 : number + 3) }
            guard line.utf8.allSatisfy({ $0 >= 0x20 }) else { throw .invalidLine }
        }
        guard rootHash.count == MerkleHash.size else { throw .malformedRootHash }
        self.origin = origin
        self.size = size
        self.rootHash = rootHash
        self.extensions = extensions
    }

    /// Reads a checkpoint note text (c2sp.org/tlog-checkpoint "Note text"): at least three non-empty lines, each
    /// ending in newline.
    ///
    /// - Throws: a ``Failure`` naming the first rule the text breaks.
    public init(parsing text: String) throws(Failure) {
        let bytes = Array(text.utf8)
        guard bytes.last == 0x0A else { throw .notNewlineTerminated }
        let lines = bytes.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false)
        guard lines.count >= 3 else { throw .tooFewLines(lines.count) }
        if let empty = lines.firstIndex(where: \.isEmpty) { throw .emptyLine(empty + 1) }
        guard let size = NoteEncoding.decimal(lines[1]) else { throw .malformedSize }
        guard let root = NoteEncoding.base64Decode(lines[2]) else { throw .malformedRootHash }
        try self.init(
            origin: String(decoding: lines[0], as: UTF8.self),
            size: size,
            rootHash: root,
            extensions: lines.dropFirst(3).map { String(decoding: $0, as: UTF8.self) }
        )
    }

    /// The note text: origin, size, root hash and extension lines, each ending in newline.
    public var text: String {
        ([origin, String(size), NoteEncoding.base64(rootHash)] + extensions).map { $0 + "\n" }.joined()
    }

    /// The same text, byte for byte (Swift's `String` equality would equate Unicode-equivalent origins).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    /// The signed checkpoint: a note of ``text`` signed by each of `signers` (the log's key name should be the
    /// origin, section "Signatures").
    ///
    /// - Throws: ``SignedNote/Failure/noSignatures`` when `signers` is empty, ``SignedNote/Failure/signingFailed``.
    public func sign(with signers: [NoteSigner]) throws(SignedNote.Failure) -> SignedNote {
        try SignedNote(signing: text, with: signers)
    }

    /// The checkpoint a signed note carries, once the note is verified against `keys` (c2sp.org/signed-note
    /// "Signatures") and its origin is `origin`. Witness cosignatures and other unknown signatures are ignored.
    ///
    /// - Throws: ``Failure/note(_:)`` for a note that is not signed by one of `keys` or signed badly by one,
    ///   ``Failure/originMismatch(expected:found:)``, or the failure of a malformed checkpoint text.
    public init(signedNote note: SignedNote, origin: String, keys: [NoteVerifierKey]) throws(Failure) {
        // The text means nothing until a known key's signature on it verifies (c2sp.org/signed-note "Note").
        do {
            _ = try note.verify(keys: keys)
        } catch {
            throw .note(error)
        }
        try self.init(parsing: note.text)
        guard self.origin.utf8.elementsEqual(origin.utf8) else {
            throw .originMismatch(expected: origin, found: self.origin)
        }
    }
}
