/// A transparency log proof file (c2sp.org/tlog-proof@v1, section "Format"):
///
/// ```
/// c2sp.org/tlog-proof@v1
/// extra <base64 extra data>          (only when there is extra data)
/// index <decimal leaf index>
/// <base64 hash>                      (the inclusion proof, leaf's sibling first; zero or more lines)
///
/// <the signed checkpoint, verbatim>
/// ```
///
/// ``init(parsing:limits:)`` is strict and total, and what it accepts ``bytes`` renders back byte for byte.
/// ``verify(entry:origin:keys:)`` runs the spec's steps (section "Verifying a tlog proof").
public struct TlogProof: Sendable, Equatable {
    /// The first line of every proof.
    public static let header = "c2sp.org/tlog-proof@v1"
    /// The most hashes an inclusion proof can have: one per level of a tree of at most `UInt64.max` leaves.
    public static let maxProofHashes = 64

    /// What a parser accepts at most.
    public struct Limits: Sendable, Equatable {
        /// Bytes in the whole proof file, extra data included.
        public var maxBytes = 1 << 22
        /// The limits of the checkpoint's note.
        public var note = SignedNote.Limits()

        /// The defaults: 4 MiB, and the note's defaults.
        public init() {}
    }

    /// The opaque extra data; empty when there is none (the `extra` line is then omitted). Not authenticated: the
    /// spec forbids trusting it implicitly.
    public let extra: [UInt8]
    /// The zero-based index of the entry in the log.
    public let index: UInt64
    /// The inclusion proof, from the leaf's sibling up to the root's child (RFC 6962 section 2.1.1).
    public let inclusionProof: [[UInt8]]
    /// The signed checkpoint, as the log issued it.
    public let note: SignedNote
    /// The checkpoint the note carries (parsed, not yet verified).
    public let checkpoint: Checkpoint

    /// A proof of these parts.
    ///
    /// - Throws: ``Failure/malformedHash(line:)`` for a proof hash that is not 32 bytes,
    ///   ``Failure/tooManyHashes``, or ``Failure/checkpoint(_:)`` when the note's text is not a checkpoint.
    public init(extra: [UInt8] = [], index: UInt64, inclusionProof: [[UInt8]], note: SignedNote) throws(Failure) {
        guard inclusionProof.count <= Self.maxProofHashes else { throw .tooManyHashes }
        if let bad = inclusionProof.firstIndex(where: { $0.count != MerkleHash.size }) {
            throw .malformedHash(line: bad + (extra.isEmpty ? 3 : 4))
        }
        do {
            self.checkpoint = try Checkpoint(parsing: note.text)
        } catch {
            throw .checkpoint(error)
        }
        self.extra = extra
        self.index = index
        self.inclusionProof = inclusionProof
        self.note = note
    }

    /// The proof file's bytes.
    public var bytes: [UInt8] {
        var lines = [Self.header]
        if !extra.isEmpty { lines.append("extra " + NoteEncoding.base64(extra)) }
        lines.append("index \(index)")
        lines += inclusionProof.map { NoteEncoding.base64($0) }
        lines.append("")
        return Array(lines.map { $0 + "\n" }.joined().utf8) + note.bytes
    }

    /// Reads a proof file (c2sp.org/tlog-proof@v1 "Format").
    ///
    /// An `extra` line with no data is refused: with no extra data, the spec omits the line. Lines are numbered
    /// from 1 in ``Failure``.
    ///
    /// - Throws: a ``Failure`` naming the first rule the bytes break.
    public init(parsing bytes: [UInt8], limits: Limits = Limits()) throws(Failure) {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(size: bytes.count, limit: limits.maxBytes) }
        var reader = LineReader(bytes: bytes)
        guard let first = reader.next(), first.elementsEqual(Self.header.utf8) else { throw .missingHeader }
        guard var line = reader.next() else { throw .missingIndex }
        var extra: [UInt8] = []
        if line.starts(with: Array("extra ".utf8)) {
            guard let decoded = NoteEncoding.base64Decode(line.dropFirst(6)), !decoded.isEmpty else {
                throw .malformedExtra
            }
            extra = decoded
            guard let next = reader.next() else { throw .missingIndex }
            line = next
        }
        guard line.starts(with: Array("index ".utf8)) else { throw .missingIndex }
        guard let index = NoteEncoding.decimal(line.dropFirst(6)) else { throw .malformedIndex }
        var hashes: [[UInt8]] = []
        while true {
            guard let hashLine = reader.next() else { throw .missingCheckpoint }
            if hashLine.isEmpty { break }
            guard hashes.count < Self.maxProofHashes else { throw .tooManyHashes }
            guard let hash = NoteEncoding.base64Decode(hashLine), hash.count == MerkleHash.size else {
                throw .malformedHash(line: reader.lineNumber)
            }
            hashes.append(hash)
        }
        let note: SignedNote
        do {
            note = try SignedNote(parsing: Array(bytes[reader.offset...]), limits: limits.note)
        } catch {
            throw .note(error)
        }
        try self.init(extra: extra, index: index, inclusionProof: hashes, note: note)
    }

    /// The lines of a byte string, each without its newline; a last line with no newline is not returned.
    struct LineReader {
        let bytes: [UInt8]
        /// Where the next line starts.
        private(set) var offset = 0
        /// The number (from 1) of the last line returned.
        private(set) var lineNumber = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func next() -> ArraySlice<UInt8>? {
            guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0x0A) else { return nil }
            defer {
                offset = end + 1
                lineNumber += 1
            }
            return bytes[offset..<end]
        }
    }
}
