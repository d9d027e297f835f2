/// The bodies a c2sp.org/tlog-witness witness answers `add-checkpoint` with (section "add-checkpoint"): on `200`, one
/// or more note signature lines (the witness's cosignatures of the checkpoint); on `409 Conflict` for an old size that
/// is not its own, its latest cosigned size as `<decimal>\n` with `Content-Type: text/x.tlog.size`.
///
/// Both parsers are strict and total, with size limits; nothing traps.
public enum AddCheckpointResponse: Sendable {
    /// Why an answer's body is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The body is larger than the parser's limit.
        case tooLarge(size: Int, limit: Int)
        /// The body holds no signature line, or does not end in a newline.
        case empty
        /// More signature lines than the parser's limit.
        case tooManySignatures(count: Int, limit: Int)
        /// A line is not a valid note signature line (or the body is not UTF-8 or holds a control character).
        case malformedSignatureLine(line: Int)
        /// A 409 body is not `<decimal>\n`.
        case malformedSize

        public var description: String {
            switch self {
            case .tooLarge(let size, let limit):
                "the witness's answer is \(size) bytes, more than the limit of \(limit)"
            case .empty: "the witness's answer holds no newline-terminated signature line"
            case .tooManySignatures(let count, let limit):
                "the witness's answer has \(count) signature lines, more than the limit of \(limit)"
            case .malformedSignatureLine(let line): "line \(line) of the witness's answer is not a note signature line"
            case .malformedSize:
                "a 409 answer's body must be the witness's tree size as a decimal with no leading zero and a newline"
            }
        }
    }

    /// The media type of a 409 answer's body.
    public static let sizeContentType = "text/x.tlog.size"

    /// The bytes answered with `200`: `signatures`' lines, in order.
    public static func cosignaturesBody(_ signatures: [SignedNote.Signature]) -> [UInt8] {
        signatures.flatMap { Array($0.line.utf8) }
    }

    /// The signature lines of a `200` body: each `— <key name> <base64>` and a newline, at least one.
    ///
    /// - Throws: a ``Failure`` naming the first rule the body breaks.
    public static func cosignatures(
        parsing bytes: [UInt8],
        maxBytes: Int = 16 << 10,
        maxSignatures: Int = 16
    ) throws(Failure) -> [SignedNote.Signature] {
        guard bytes.count <= maxBytes else { throw .tooLarge(size: bytes.count, limit: maxBytes) }
        guard bytes.last == 0x0A else { throw .empty }
        guard String(validating: bytes, as: UTF8.self) != nil, NoteEncoding.hasNoControlCharacters(bytes) else {
            throw .malformedSignatureLine(line: 1)
        }
        let count = bytes.count(where: { $0 == 0x0A })
        guard count <= maxSignatures else { throw .tooManySignatures(count: count, limit: maxSignatures) }
        var signatures: [SignedNote.Signature] = []
        var start = 0
        for end in bytes.indices where bytes[end] == 0x0A {
            do {
                signatures.append(try SignedNote.signature(bytes[start..<end], line: signatures.count + 1))
            } catch {
                throw .malformedSignatureLine(line: signatures.count + 1)
            }
            start = end + 1
        }
        return signatures
    }

    /// The body answered with `409`: `<size>\n`.
    public static func sizeBody(_ size: UInt64) -> [UInt8] { Array("\(size)\n".utf8) }

    /// The witness's tree size in a `409` body, `<decimal>\n` (at most 21 bytes).
    ///
    /// - Throws: ``Failure/malformedSize``.
    public static func size(parsing bytes: [UInt8]) throws(Failure) -> UInt64 {
        guard bytes.count <= 21, bytes.last == 0x0A, let size = NoteEncoding.decimal(bytes.dropLast()) else {
            throw .malformedSize
        }
        return size
    }
}
