/// The path of a tlog-tiles resource below a log's prefix (c2sp.org/tlog-tiles, "Merkle Tree" and "Log entries"):
/// `tile/<L>/<N>[.p/<W>]` for a tile of hashes, `tile/entries/<N>[.p/<W>]` for an entry bundle.
///
/// - `<L>`, the level: a decimal from 0 to 63 with no leading zero.
/// - `<N>`, the index: zero-padded 3-digit path elements, all but the last beginning with `x` (index 1234067 is
///   `x001/x234/067`).
/// - `.p/<W>`, only for a partial tile: its width, a decimal from 1 to 255 with no leading zero.
///
/// ``init(parsing:)`` is strict and total: it accepts exactly the paths ``path`` renders, so each resource has one
/// path. The spec's encoding of `<N>` is the shortest one (as its example and the logs writing it do), so a leading
/// element `x000` is refused, and so is an index that does not fit 64 bits.
public struct TilePath: Sendable, Hashable, CustomStringConvertible {
    /// What the path names.
    public enum Kind: Sendable, Hashable {
        /// A tile of hashes at `level` (tree level `8 * level`).
        case hashes(level: Int)
        /// An entry bundle (the leaves under the level 0 tile of the same index).
        case entries
    }

    /// Why a path is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The path does not start with `tile/` or has an empty element.
        case notATilePath
        /// `<L>` is not a decimal from 0 to 63 without leading zero (or `entries`).
        case invalidLevel(String)
        /// `<N>` is missing, or an element is not `x` and three digits (or three digits, last), or its value does
        /// not fit 64 bits, or it starts with a needless `x000`.
        case invalidIndex(String)
        /// `<W>` is not a decimal from 1 to 255 without leading zero, or `.p` is not followed by exactly one element.
        case invalidWidth(String)

        public var description: String {
            switch self {
            case .notATilePath: "a tile path is tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], with no empty element"
            case .invalidLevel(let text):
                "tile level \"\(text)\" must be a decimal from 0 to 63 with no leading zero, or \"entries\""
            case .invalidIndex(let reason): "tile index: \(reason)"
            case .invalidWidth(let text):
                "partial tile width \"\(text)\" must be a decimal from 1 to 255 with no leading zero, after .p/"
            }
        }
    }

    /// The highest tile level the spec allows.
    public static let maxLevel = 63

    /// Hashes or entries.
    public let kind: Kind
    /// The tile's index within its level.
    public let index: UInt64
    /// The width of a partial tile, 1 ... 255; nil for a full tile (256 hashes or entries).
    public let partialWidth: Int?

    /// The tile's width: ``partialWidth``, or 256 for a full tile.
    public var width: Int { partialWidth ?? MerkleTiles.width }

    /// A tile path.
    /// - Throws: ``Failure`` for a level outside 0 ... 63 or a partial width outside 1 ... 255.
    public init(kind: Kind, index: UInt64, partialWidth: Int? = nil) throws(Failure) {
        if case .hashes(let level) = kind, !(0...Self.maxLevel).contains(level) {
            throw .invalidLevel(String(level))
        }
        if let partialWidth, !(1..<MerkleTiles.width).contains(partialWidth) {
            throw .invalidWidth(String(partialWidth))
        }
        self.kind = kind
        self.index = index
        self.partialWidth = partialWidth
    }

    /// Reads a path such as `tile/0/x001/234.p/17` or `tile/entries/005` (no leading or trailing slash).
    /// - Throws: ``Failure`` for anything but the one form ``path`` renders.
    public init(parsing path: some StringProtocol) throws(Failure) {
        var elements = Array(path.utf8).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map {
            Array($0)
        }
        guard elements.count >= 3, elements.allSatisfy({ !$0.isEmpty }), elements[0] == Array("tile".utf8) else {
            throw .notATilePath
        }
        let kind: Kind
        if elements[1] == Array("entries".utf8) {
            kind = .entries
        } else {
            guard let level = Self.decimal(elements[1], maxDigits: 2), level <= UInt64(Self.maxLevel) else {
                throw .invalidLevel(Self.text(elements[1]))
            }
            kind = .hashes(level: Int(level))
        }
        elements.removeFirst(2)
        var partialWidth: Int?
        let suffix = Array(".p".utf8)
        if elements.count >= 2, elements[elements.count - 2].count > suffix.count,
            Array(elements[elements.count - 2].suffix(suffix.count)) == suffix
        {
            let text = elements.removeLast()
            guard let width = Self.decimal(text, maxDigits: 3), (1..<UInt64(MerkleTiles.width)).contains(width) else {
                throw .invalidWidth(Self.text(text))
            }
            partialWidth = Int(width)
            elements[elements.count - 1].removeLast(suffix.count)
        }
        try self.init(kind: kind, index: try Self.index(elements), partialWidth: partialWidth)
    }

    /// The path, `tile/<L or entries>/<N>[.p/<W>]`.
    public var path: String {
        var groups = [index % 1000]
        var rest = index / 1000
        while rest > 0 {
            groups.insert(rest % 1000, at: 0)
            rest /= 1000
        }
        let digits = groups.map { group in
            let text = String(group)
            return String(repeating: "0", count: 3 - text.count) + text
        }
        let index = (digits.dropLast().map { "x" + $0 } + [digits[digits.count - 1]]).joined(separator: "/")
        let level: String
        switch kind {
        case .hashes(let value): level = String(value)
        case .entries: level = "entries"
        }
        return "tile/\(level)/\(index)" + (partialWidth.map { ".p/\($0)" } ?? "")
    }

    public var description: String { path }

    /// `<N>` from its elements: `x` and three digits each, the last three digits alone, the shortest form.
    static func index(_ elements: [[UInt8]]) throws(Failure) -> UInt64 {
        // UInt64.max has 20 digits: seven groups of three.
        guard (1...7).contains(elements.count) else {
            throw .invalidIndex("it must have 1 to 7 elements, not \(elements.count)")
        }
        var value: UInt64 = 0
        for (position, element) in elements.enumerated() {
            let last = position == elements.count - 1
            let digits = last ? element[...] : element.dropFirst()
            guard last || element.first == UInt8(ascii: "x"), digits.count == 3,
                digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else {
                let form = last ? "three digits" : "\"x\" and three digits"
                throw .invalidIndex("element \"\(Self.text(element))\" is not \(form)")
            }
            let group = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - UInt8(ascii: "0")) }
            if position == 0, !last, group == 0 {
                throw .invalidIndex("a leading element x000 is not the shortest form")
            }
            let (scaled, overflow1) = value.multipliedReportingOverflow(by: 1000)
            let (sum, overflow2) = scaled.addingReportingOverflow(group)
            guard !overflow1, !overflow2 else { throw .invalidIndex("it does not fit 64 bits") }
            value = sum
        }
        return value
    }

    /// An ASCII decimal of at most `maxDigits` digits with no leading zero unless it is `0`.
    static func decimal(_ text: [UInt8], maxDigits: Int) -> UInt64? {
        guard !text.isEmpty, text.count <= maxDigits, text[0] != UInt8(ascii: "0") || text.count == 1,
            text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return text.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - UInt8(ascii: "0")) }
    }

    /// Bytes of a path element for a message: valid UTF-8 as is, at most 40 characters.
    static func text(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(40), as: UTF8.self)
        return bytes.count > 40 ? text + "…" : text
    }
}
