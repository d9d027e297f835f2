/// The encodings a client of the log needs beside the C2SP files themselves: standard base64 in its canonical form
/// (RFC 4648 section 4, padded, unused bits zero: the form every C2SP format uses, docs/TRANSPARENCY.md section 5),
/// and a list of proof hashes as text, one base64 hash per line (the form `auditctl verify-consistency --proof`
/// reads, docs/PROOFS.md).
///
/// Every decoder here is strict and total: what it accepts renders back to the same bytes, and nothing traps.
public enum ProofHashes: Sendable {
    /// Why a list of hashes is refused. Lines are numbered from 1.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text is larger than `limit` bytes, the size of the most hashes the parser takes (45 bytes a line):
        /// it holds more hashes than that, or other bytes.
        case tooLarge(size: Int, limit: Int)
        /// A line is not the canonical standard base64 of a 32-byte hash (an empty line, a carriage return, spaces,
        /// another length...).
        case malformedHash(line: Int)

        public var description: String {
            switch self {
            case .tooLarge(let size, let limit):
                "the proof is \(size) bytes, more than the \(limit) bytes of the most hashes it may hold"
            case .malformedHash(let line): "line \(line) is not the standard base64 of a 32-byte hash"
            }
        }
    }

    /// More hashes than any consistency or inclusion proof between trees of at most `UInt64.max` leaves needs.
    public static let maxHashes = 2 * TlogProof.maxProofHashes

    /// The padded standard base64 of `bytes`.
    public static func base64(_ bytes: [UInt8]) -> String { NoteEncoding.base64(bytes) }

    /// The bytes of canonical padded standard base64; nil for anything else (a wrong length, a character outside the
    /// alphabet, misplaced or missing padding, non-zero unused bits). The empty text is the empty byte string.
    public static func bytes(base64 text: some Collection<UInt8>) -> [UInt8]? { NoteEncoding.base64Decode(text) }

    /// The 32-byte hash a canonical base64 text holds; nil for anything else.
    public static func hash(base64 text: some Collection<UInt8>) -> [UInt8]? {
        // 32 bytes are 44 base64 characters: anything longer is refused before it is decoded.
        guard text.count == 44, let hash = NoteEncoding.base64Decode(text), hash.count == MerkleHash.size else {
            return nil
        }
        return hash
    }

    /// The hashes as text: each one's base64 and a newline. The empty list is the empty text.
    public static func render(_ hashes: [[UInt8]]) -> [UInt8] {
        Array(hashes.map { NoteEncoding.base64($0) + "\n" }.joined().utf8)
    }

    /// Reads hashes written one per line, each the canonical base64 of 32 bytes followed by a newline; the last
    /// line's newline may be missing. The empty text is the empty list (the proof between equal sizes).
    ///
    /// - Parameters:
    ///   - bytes: the text.
    ///   - maxHashes: the most hashes accepted.
    /// - Throws: a ``Failure`` naming the first line that breaks a rule.
    public static func parse(_ bytes: [UInt8], maxHashes: Int = Self.maxHashes) throws(Failure) -> [[UInt8]] {
        // A line is 45 bytes: the limit bounds the number of hashes before any line is read.
        let (product, overflow) = max(0, maxHashes).multipliedReportingOverflow(by: 45)
        let limit = overflow ? Int.max : product
        guard bytes.count <= limit else { throw .tooLarge(size: bytes.count, limit: limit) }
        var body = bytes[...]
        if body.last == 0x0A { body = body.dropLast() }
        guard !body.isEmpty else { return [] }
        var hashes: [[UInt8]] = []
        for (number, line) in body.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            guard let hash = hash(base64: line) else { throw .malformedHash(line: number + 1) }
            hashes.append(hash)
        }
        return hashes
    }
}
