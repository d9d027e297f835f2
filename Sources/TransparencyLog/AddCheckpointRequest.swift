/// The body of a c2sp.org/tlog-witness `add-checkpoint` request (section "add-checkpoint"): an old size line
/// `old <size>`, zero to 63 consistency proof lines (one base64 hash each), an empty line, then the signed checkpoint
/// note.
///
/// Parsing is strict and total: at most ``Limits/maxBytes`` bytes, decimals with no leading zero that fit 64 bits,
/// canonical base64 of exactly 32 bytes per proof line, at most 63 of them, the note by ``SignedNote``'s own rules.
/// What parses renders back to the same bytes (``bytes``); nothing traps.
public struct AddCheckpointRequest: Sendable, Equatable {
    /// Why a body is refused (a witness answers `400 Bad Request`).
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The body is larger than the parser's limit.
        case tooLarge(size: Int, limit: Int)
        /// The first line is not `old <decimal>`.
        case malformedOldSize
        /// A proof line is not canonical base64 of a 32-byte hash.
        case malformedProofLine(line: Int)
        /// More than 63 proof lines.
        case tooManyProofLines(Int)
        /// There is no empty line before the checkpoint.
        case missingBlankLine
        /// The checkpoint is not a valid signed note.
        case malformedCheckpoint(SignedNote.Failure)

        public var description: String {
            switch self {
            case .tooLarge(let size, let limit): "the request body is \(size) bytes, more than the limit of \(limit)"
            case .malformedOldSize:
                "the first line must be 'old <size>', a decimal with no leading zero that fits 64 bits"
            case .malformedProofLine(let line):
                "consistency proof line \(line) is not the canonical base64 of a 32-byte hash"
            case .tooManyProofLines(let count): "\(count) consistency proof lines, more than 63"
            case .missingBlankLine: "no empty line ends the consistency proof"
            case .malformedCheckpoint(let failure): "the checkpoint is not a valid signed note: \(failure)"
            }
        }
    }

    /// What the parser accepts at most.
    public struct Limits: Sendable, Equatable {
        /// Bytes in the whole body.
        public var maxBytes = 64 << 10
        /// The checkpoint note's own limits.
        public var note = SignedNote.Limits()

        /// The defaults: 64 KiB, and the note's defaults within it.
        public init() {}
    }

    /// Consistency proof lines a client may send at most (section "add-checkpoint").
    public static let maxProofLines = 63

    /// The size of the previous checkpoint the client believes the witness holds (0 for none).
    public let oldSize: UInt64
    /// The RFC 6962 consistency proof from ``oldSize`` to the checkpoint's size.
    public let proof: [[UInt8]]
    /// The signed checkpoint.
    public let checkpoint: SignedNote

    /// A request of these parts.
    ///
    /// - Throws: ``Failure/tooManyProofLines(_:)`` or ``Failure/malformedProofLine(line:)`` for a hash that is not
    ///   32 bytes.
    public init(oldSize: UInt64, proof: [[UInt8]], checkpoint: SignedNote) throws(Failure) {
        guard proof.count <= Self.maxProofLines else { throw .tooManyProofLines(proof.count) }
        if let bad = proof.firstIndex(where: { $0.count != MerkleHash.size }) {
            throw .malformedProofLine(line: bad + 1)
        }
        self.oldSize = oldSize
        self.proof = proof
        self.checkpoint = checkpoint
    }

    /// The body: `old <size>\n`, the proof lines, `\n`, the checkpoint note.
    public var bytes: [UInt8] {
        var out = Array("old \(oldSize)\n".utf8)
        for hash in proof { out += Array((NoteEncoding.base64(hash) + "\n").utf8) }
        out.append(0x0A)
        return out + checkpoint.bytes
    }

    /// Reads a request body.
    ///
    /// - Throws: a ``Failure`` naming the first rule the bytes break.
    public init(parsing bytes: [UInt8], limits: Limits = Limits()) throws(Failure) {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(size: bytes.count, limit: limits.maxBytes) }
        let prefix = Array("old ".utf8)
        guard bytes.starts(with: prefix), let end = bytes.firstIndex(of: 0x0A),
            let old = NoteEncoding.decimal(bytes[prefix.count..<end])
        else { throw .malformedOldSize }
        var proof: [[UInt8]] = []
        var start = end + 1
        while true {
            guard let lineEnd = bytes[start...].firstIndex(of: 0x0A) else { throw .missingBlankLine }
            if lineEnd == start { break }
            guard proof.count < Self.maxProofLines else { throw .tooManyProofLines(proof.count + 1) }
            guard let hash = NoteEncoding.base64Decode(bytes[start..<lineEnd]), hash.count == MerkleHash.size else {
                throw .malformedProofLine(line: proof.count + 1)
            }
            proof.append(hash)
            start = lineEnd + 1
        }
        let note: SignedNote
        do {
            note = try SignedNote(parsing: Array(bytes[(start + 1)...]), limits: limits.note)
        } catch {
            throw .malformedCheckpoint(error)
        }
        try self.init(oldSize: old, proof: proof, checkpoint: note)
    }
}
