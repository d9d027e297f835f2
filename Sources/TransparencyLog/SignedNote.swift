/// A signed note (c2sp.org/signed-note@v1.0.0): a text ending in newline, a blank line, and one or more signature
/// lines `— <key name> <base64(4-byte key ID || signature)>`.
///
/// Parsing is strict and total: a note is at most ``Limits/maxBytes`` bytes of valid UTF-8 with no control character
/// but newline, at most ``Limits/maxSignatures`` signatures, base64 in its canonical form only; anything else is
/// refused with a ``Failure`` and nothing traps. What parses renders back to the same bytes (``bytes``).
///
/// The text must be ignored unless ``verify(keys:)`` says a trusted key signed it (section "Note").
public struct SignedNote: Sendable, Equatable {
    /// One signature line: who signed (name and key ID) and the signature bytes.
    public struct Signature: Sendable, Equatable {
        /// The key name; the rules of ``NoteVerifierKey/isValidKeyName(_:)``.
        public let keyName: String
        /// The key ID, the first four bytes of the decoded signature, big-endian.
        public let keyID: UInt32
        /// The signature proper: the decoded bytes after the key ID (64 for Ed25519).
        public let signature: [UInt8]

        /// A signature line's content.
        ///
        /// - Throws: ``Failure/invalidKeyName(line:)`` or ``Failure/signatureTooShort(line:)`` (an empty signature).
        public init(keyName: String, keyID: UInt32, signature: [UInt8]) throws(Failure) {
            guard NoteVerifierKey.isValidKeyName(keyName) else { throw .invalidKeyName(line: nil) }
            guard !signature.isEmpty else { throw .signatureTooShort(line: nil) }
            self.keyName = keyName
            self.keyID = keyID
            self.signature = signature
        }

        /// The same line, byte for byte (Swift's `String` equality would equate Unicode-equivalent names).
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.line.utf8.elementsEqual(rhs.line.utf8) }

        /// The line, with its newline: `— <key name> <base64(key ID || signature)>\n`.
        public var line: String {
            "\u{2014} \(keyName) \(NoteEncoding.base64(NoteEncoding.bytes(keyID) + signature))\n"
        }
    }

    /// What a parser accepts at most. The spec asks verifiers to bound the number of signatures, or the note's size,
    /// and to accept at least 16 signatures (section "Format").
    public struct Limits: Sendable, Equatable {
        /// Bytes in the whole note.
        public var maxBytes = 1 << 20
        /// Signature lines in the note.
        public var maxSignatures = 100

        /// The defaults: 1 MiB, 100 signatures.
        public init() {}
    }

    /// The note text, with its final newline and without the separating blank line.
    public let text: String
    /// The signature lines, in order.
    public let signatures: [Signature]

    /// A note of `text` with `signatures`.
    ///
    /// - Throws: ``Failure/textNotNewlineTerminated``, ``Failure/controlCharacter`` or ``Failure/noSignatures``.
    public init(text: String, signatures: [Signature]) throws(Failure) {
        try Self.checkText(text)
        guard !signatures.isEmpty else { throw .noSignatures }
        self.text = text
        self.signatures = signatures
    }

    /// The same bytes (Swift's `String` equality would equate Unicode-equivalent texts).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }

    /// The note's bytes: the text, a blank line, the signature lines.
    public var bytes: [UInt8] {
        Array(text.utf8) + [0x0A] + signatures.flatMap { Array($0.line.utf8) }
    }

    /// Reads a signed note (c2sp.org/signed-note "Format"): the text is everything up to and including the newline
    /// before the last empty line; every line after it is a signature line.
    ///
    /// - Throws: a ``Failure`` naming the first rule the bytes break.
    public init(parsing bytes: [UInt8], limits: Limits = Limits()) throws(Failure) {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(size: bytes.count, limit: limits.maxBytes) }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .notUTF8 }
        guard NoteEncoding.hasNoControlCharacters(bytes) else { throw .controlCharacter }
        guard bytes.last == 0x0A else { throw .notNewlineTerminated }
        // The last "\n\n": its first newline ends the text, its second is the blank line.
        var separator: Int?
        var index = bytes.count - 2
        while index >= 0 {
            if bytes[index] == 0x0A && bytes[index + 1] == 0x0A {
                separator = index
                break
            }
            index -= 1
        }
        guard let separator else { throw .missingBlankLine }
        let block = bytes[(separator + 2)...]
        let count = block.count(where: { $0 == 0x0A })
        guard count > 0 else { throw .noSignatures }
        guard count <= limits.maxSignatures else { throw .tooManySignatures(count: count, limit: limits.maxSignatures) }
        var signatures: [Signature] = []
        signatures.reserveCapacity(count)
        var lineStart = block.startIndex
        for (number, lineEnd) in block.indices.filter({ block[$0] == 0x0A }).enumerated() {
            signatures.append(try Self.signature(block[lineStart..<lineEnd], line: number + 1))
            lineStart = lineEnd + 1
        }
        self.text = String(decoding: bytes[...separator], as: UTF8.self)
        self.signatures = signatures
    }

    /// The em dash (U+2014) and space that open a signature line.
    static let signaturePrefix: [UInt8] = Array("\u{2014} ".utf8)

    /// One signature line without its newline: `— <key name> <base64(key ID || signature)>`.
    static func signature(_ line: ArraySlice<UInt8>, line number: Int) throws(Failure) -> Signature {
        guard line.starts(with: signaturePrefix) else { throw .malformedSignatureLine(line: number) }
        let rest = line.dropFirst(signaturePrefix.count)
        guard let space = rest.firstIndex(of: 0x20) else { throw .malformedSignatureLine(line: number) }
        let name = String(decoding: rest[..<space], as: UTF8.self)
        guard NoteVerifierKey.isValidKeyName(name) else { throw .invalidKeyName(line: number) }
        guard let decoded = NoteEncoding.base64Decode(rest[(space + 1)...]) else {
            throw .malformedSignature(line: number)
        }
        guard decoded.count > 4 else { throw .signatureTooShort(line: number) }
        return try Signature(
            keyName: name,
            keyID: NoteEncoding.uint32(decoded[...]),
            signature: Array(decoded.dropFirst(4))
        )
    }

    /// The rules a note text obeys on its own: it ends in newline and holds no control character but newline.
    static func checkText(_ text: String) throws(Failure) {
        guard text.utf8.last == 0x0A else { throw .textNotNewlineTerminated }
        guard NoteEncoding.hasNoControlCharacters(text.utf8) else { throw .controlCharacter }
    }
}
