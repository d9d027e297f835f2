/// Ed25519 checkpoint cosignatures, `cosignature/v1` (c2sp.org/tlog-cosignature): a note signature line
/// `— <cosigner name> base64(key ID || timestamp || signature)` on a checkpoint, where the key ID is computed with
/// the type byte `0x04` (``CosignatureVerifierKey``), the timestamp is 8 bytes big-endian (POSIX seconds, at most
/// 2^63 - 1) and the signature is Ed25519's over ``message(text:timestamp:)``.
public enum Cosignature: Sendable {
    /// Why a cosignature is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The signature after the key ID is not an 8-byte timestamp and a 64-byte Ed25519 signature.
        case wrongLength(Int)
        /// The timestamp exceeds 2^63 - 1 (section "Format": it MUST NOT).
        case timestampTooLarge(UInt64)
        /// A line with the cosigner's name and key ID does not verify: forged or corrupted.
        case badCosignature(keyName: String, keyID: UInt32)
        /// Ed25519 signing failed.
        case signingFailed

        public var description: String {
            switch self {
            case .wrongLength(let count):
                "a cosignature is an 8-byte timestamp and a 64-byte Ed25519 signature after its key ID, not \(count) "
                    + "bytes"
            case .timestampTooLarge(let value): "the cosignature's timestamp \(value) exceeds 2^63 - 1"
            case .badCosignature(let name, let keyID):
                "the cosignature of witness \(name) (\(NoteEncoding.hex32(keyID))) does not verify: refuse it"
            case .signingFailed: "Ed25519 signing failed"
            }
        }
    }

    /// The header line of the signed message, for domain separation (section "Ed25519 signed message").
    public static let header = "cosignature/v1"

    /// The largest timestamp a cosignature may carry, 2^63 - 1.
    public static let maxTimestamp = UInt64(Int64.max)

    /// The signed message (section "Ed25519 signed message"): `cosignature/v1\n`, `time <timestamp>\n` (decimal, no
    /// leading zero), then the whole note text of the checkpoint, with its final newline and without signatures.
    public static func message(text: String, timestamp: UInt64) -> [UInt8] {
        Array("\(header)\ntime \(timestamp)\n".utf8) + Array(text.utf8)
    }

    /// The `timestamped_signature` after the key ID: 8 bytes of timestamp, big-endian, and the signature.
    static func join(timestamp: UInt64, signature: [UInt8]) -> [UInt8] {
        (0..<8).map { UInt8(timestamp >> UInt64(56 - 8 * $0) & 0xFF) } + signature
    }

    /// The timestamp and the Ed25519 signature of a cosignature's bytes after the key ID.
    ///
    /// - Throws: ``Failure/wrongLength(_:)`` unless there are exactly 72 bytes, ``Failure/timestampTooLarge(_:)``.
    static func split(_ bytes: [UInt8]) throws(Failure) -> (timestamp: UInt64, signature: [UInt8]) {
        guard bytes.count == 72 else { throw .wrongLength(bytes.count) }
        let timestamp = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard timestamp <= maxTimestamp else { throw .timestampTooLarge(timestamp) }
        return (timestamp, Array(bytes.suffix(64)))
    }
}
