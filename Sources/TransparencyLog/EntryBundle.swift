/// An entry bundle of c2sp.org/tlog-tiles ("Log entries"): the leaves under one level 0 tile, each prefixed with
/// its length as a big-endian `uint16`. Entry `i` of bundle `N` is leaf `256 * N + i`, and hashes
/// (``MerkleHash/leaf(_:)``) to hash `i` of level 0 tile `N`.
///
/// The length prefix holds at most 65 535 bytes. A bundle that would hold a longer entry cannot be written without
/// losing bytes, so ``encode(_:)`` refuses it (``Failure/entryTooLarge(position:length:)``) and the log serves that
/// entry in another form at another path, as the spec allows ("Logs MAY serve entries in different formats").
public enum EntryBundle: Sendable {
    /// The longest entry a bundle holds: the largest `uint16`.
    public static let maxEntryLength = Int(UInt16.max)

    /// Why a bundle cannot be written or read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The entry at `position` in the bundle is longer than ``EntryBundle/maxEntryLength``.
        case entryTooLarge(position: Int, length: Int)
        /// More than 256 entries.
        case tooManyEntries
        /// The bytes end inside a length prefix or an entry that starts at `offset`.
        case truncated(offset: Int)

        public var description: String {
            switch self {
            case .entryTooLarge(let position, let length):
                "entry \(position) of the bundle is \(length) bytes; a bundle's uint16 length prefix holds at most "
                    + "\(EntryBundle.maxEntryLength)"
            case .tooManyEntries: "a bundle holds at most \(MerkleTiles.width) entries"
            case .truncated(let offset): "the bundle ends inside the entry starting at byte \(offset)"
            }
        }
    }

    /// The bundle of `entries`, in order.
    /// - Throws: ``Failure`` for more than 256 entries or one longer than ``maxEntryLength``.
    public static func encode(_ entries: [[UInt8]]) throws(Failure) -> [UInt8] {
        guard entries.count <= MerkleTiles.width else { throw .tooManyEntries }
        var out: [UInt8] = []
        out.reserveCapacity(entries.reduce(0) { $0 + 2 + $1.count })
        for (position, entry) in entries.enumerated() {
            guard entry.count <= maxEntryLength else { throw .entryTooLarge(position: position, length: entry.count) }
            out.append(UInt8(entry.count >> 8))
            out.append(UInt8(entry.count & 0xFF))
            out.append(contentsOf: entry)
        }
        return out
    }

    /// The entries of a bundle, in order.
    /// - Throws: ``Failure`` for bytes that end inside an entry or hold more than 256 entries.
    public static func parse(_ bytes: [UInt8]) throws(Failure) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            guard entries.count < MerkleTiles.width else { throw .tooManyEntries }
            guard bytes.count - offset >= 2 else { throw .truncated(offset: offset) }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard bytes.count - offset - 2 >= length else { throw .truncated(offset: offset) }
            entries.append(Array(bytes[offset + 2..<offset + 2 + length]))
            offset += 2 + length
        }
        return entries
    }
}
