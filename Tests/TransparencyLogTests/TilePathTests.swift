import Testing
import TransparencyLog

/// tlog-tiles resource paths (c2sp.org/tlog-tiles, "Merkle Tree", "Log entries"): the spec's example, round trips,
/// and every malformed form refused.
@Suite("TilePath")
struct TilePathTests {
    @Test("the spec's example index 1234067 is x001/x234/067, and paths render back as they parse")
    func specExampleAndRoundTrips() throws {
        let example = try TilePath(parsing: "tile/0/x001/x234/067")
        #expect(example.kind == .hashes(level: 0))
        #expect(example.index == 1_234_067)
        #expect(example.partialWidth == nil)
        #expect(example.width == 256)
        let cases: [(String, TilePath.Kind, UInt64, Int?)] = [
            ("tile/0/000", .hashes(level: 0), 0, nil),
            ("tile/0/001.p/1", .hashes(level: 0), 1, 1),
            ("tile/1/999.p/255", .hashes(level: 1), 999, 255),
            ("tile/63/x001/000", .hashes(level: 63), 1000, nil),
            ("tile/entries/000.p/17", .entries, 0, 17),
            ("tile/entries/x001/x234/067", .entries, 1_234_067, nil),
            ("tile/2/x018/x446/x744/x073/x709/x551/615", .hashes(level: 2), UInt64.max, nil),
        ]
        for (text, kind, index, width) in cases {
            let path = try TilePath(parsing: text)
            #expect(path.kind == kind && path.index == index && path.partialWidth == width, "\(text)")
            #expect(path.path == text)
            #expect(try TilePath(kind: kind, index: index, partialWidth: width) == path)
        }
        for index: UInt64 in [0, 7, 999, 1000, 1001, 999_999, 1_000_000, 123_456_789, UInt64.max - 1] {
            let path = try TilePath(kind: .entries, index: index)
            #expect(try TilePath(parsing: path.path) == path)
        }
    }

    @Test("every malformed path is refused with its reason")
    func malformedPaths() {
        let cases: [(String, TilePath.Failure)] = [
            ("", .notATilePath),
            ("tile", .notATilePath),
            ("tile/0", .notATilePath),
            ("tiles/0/000", .notATilePath),
            ("/tile/0/000", .notATilePath),
            ("tile/0/000/", .notATilePath),
            ("tile/0//000", .notATilePath),
            ("tile//000", .notATilePath),
            ("tile/00/000", .invalidLevel("00")),
            ("tile/01/000", .invalidLevel("01")),
            ("tile/64/000", .invalidLevel("64")),
            ("tile/100/000", .invalidLevel("100")),
            ("tile/-1/000", .invalidLevel("-1")),
            ("tile/+1/000", .invalidLevel("+1")),
            ("tile/a/000", .invalidLevel("a")),
            ("tile/Entries/000", .invalidLevel("Entries")),
            ("tile/data/000", .invalidLevel("data")),
            ("tile/../checkpoint", .invalidLevel("..")),
            ("tile/0/0", .invalidIndex("element \"0\" is not three digits")),
            ("tile/0/01", .invalidIndex("element \"01\" is not three digits")),
            ("tile/0/0001", .invalidIndex("element \"0001\" is not three digits")),
            ("tile/0/x001", .invalidIndex("element \"x001\" is not three digits")),
            ("tile/0/001/002", .invalidIndex("element \"001\" is not \"x\" and three digits")),
            ("tile/0/x01/002", .invalidIndex("element \"x01\" is not \"x\" and three digits")),
            ("tile/0/X001/002", .invalidIndex("element \"X001\" is not \"x\" and three digits")),
            ("tile/0/x000/001", .invalidIndex("a leading element x000 is not the shortest form")),
            ("tile/0/x000/x000/000", .invalidIndex("a leading element x000 is not the shortest form")),
            ("tile/0/x001/x000/x000/x000/x000/x000/x000/000", .invalidIndex("it must have 1 to 7 elements, not 8")),
            ("tile/0/x018/x446/x744/x073/x709/x551/616", .invalidIndex("it does not fit 64 bits")),
            ("tile/0/x999/x999/x999/x999/x999/x999/999", .invalidIndex("it does not fit 64 bits")),
            ("tile/0/1e3", .invalidIndex("element \"1e3\" is not three digits")),
            ("tile/0/%30%30%31", .invalidIndex("element \"%30%30%31\" is not three digits")),
            ("tile/0/001.p", .invalidIndex("element \"001.p\" is not three digits")),
            ("tile/0/.p/5", .invalidIndex("element \".p\" is not \"x\" and three digits")),
            ("tile/0/001.p/0", .invalidWidth("0")),
            ("tile/0/001.p/256", .invalidWidth("256")),
            ("tile/0/001.p/017", .invalidWidth("017")),
            ("tile/0/001.p/1000", .invalidWidth("1000")),
            ("tile/0/001.p/+5", .invalidWidth("+5")),
            ("tile/0/001.p/5/6", .invalidIndex("element \"001.p\" is not \"x\" and three digits")),
            ("tile/0/001.q/5", .invalidIndex("element \"001.q\" is not \"x\" and three digits")),
            ("tile/0/x001.p/5", .invalidIndex("element \"x001\" is not three digits")),
            ("tile/entries/001.p/256", .invalidWidth("256")),
            ("tile/entries", .notATilePath),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text)") { try TilePath(parsing: text) }
        }
        #expect(throws: TilePath.Failure.invalidLevel("64")) { try TilePath(kind: .hashes(level: 64), index: 0) }
        #expect(throws: TilePath.Failure.invalidWidth("256")) {
            try TilePath(kind: .entries, index: 0, partialWidth: 256)
        }
        #expect(throws: TilePath.Failure.invalidWidth("0")) { try TilePath(kind: .entries, index: 0, partialWidth: 0) }
    }

    @Test("a tree of 70 000 leaves has the tiles the spec lists; 256 leaves, a full tile and a level 1 tile of one")
    func specTileWidths() {
        // c2sp.org/tlog-tiles, "Partial Tiles".
        #expect(MerkleTiles.tileWidth(level: 0, index: 272, size: 70_000) == 256)
        #expect(MerkleTiles.tileWidth(level: 0, index: 273, size: 70_000) == 112)
        #expect(MerkleTiles.tileWidth(level: 0, index: 274, size: 70_000) == 0)
        #expect(MerkleTiles.tileWidth(level: 1, index: 0, size: 70_000) == 256)
        #expect(MerkleTiles.tileWidth(level: 1, index: 1, size: 70_000) == 17)
        #expect(MerkleTiles.tileWidth(level: 2, index: 0, size: 70_000) == 1)
        #expect(MerkleTiles.tileWidth(level: 3, index: 0, size: 70_000) == 0)
        #expect(MerkleTiles.tileWidth(level: 0, index: 0, size: 256) == 256)
        #expect(MerkleTiles.tileWidth(level: 1, index: 0, size: 256) == 1)
        #expect(MerkleTiles.tileWidth(level: 0, index: 0, size: 0) == 0)
        // Hostile values never trap.
        #expect(MerkleTiles.tileWidth(level: 0, index: UInt64.max, size: UInt64.max) == 0)
        #expect(MerkleTiles.tileWidth(level: 7, index: 0, size: UInt64.max) == 255)
        #expect(MerkleTiles.tileWidth(level: 8, index: 0, size: UInt64.max) == 0)
        #expect(MerkleTiles.tileWidth(level: 63, index: 0, size: UInt64.max) == 0)
        #expect(MerkleTiles.tileWidth(level: -1, index: 0, size: 5) == 0)
    }
}

/// Entry bundles (c2sp.org/tlog-tiles, "Log entries"): big-endian uint16 length prefixes, and no entry past 65 535.
@Suite("EntryBundle")
struct EntryBundleTests {
    @Test("entries round trip, with their length prefixes big-endian")
    func roundTrip() throws {
        let entries: [[UInt8]] = [[], [1], [UInt8](repeating: 7, count: 300), [UInt8](repeating: 9, count: 65_535)]
        let bundle = try EntryBundle.encode(entries)
        #expect(Array(bundle.prefix(5)) == [0, 0, 0, 1, 1])
        #expect(Array(bundle[5..<7]) == [0x01, 0x2C])
        #expect(bundle.count == entries.reduce(0) { $0 + 2 + $1.count })
        #expect(try EntryBundle.parse(bundle) == entries)
        #expect(try EntryBundle.parse([]) == [])
        #expect(try EntryBundle.parse(try EntryBundle.encode(Array(repeating: [5], count: 256))).count == 256)
    }

    @Test("an entry past 65 535 bytes, a 257th entry and truncated bytes are refused")
    func refusals() {
        #expect(throws: EntryBundle.Failure.entryTooLarge(position: 1, length: 65_536)) {
            try EntryBundle.encode([[1], [UInt8](repeating: 0, count: 65_536)])
        }
        #expect(throws: EntryBundle.Failure.tooManyEntries) { try EntryBundle.encode(Array(repeating: [], count: 257)) }
        #expect(throws: EntryBundle.Failure.tooManyEntries) { try EntryBundle.parse([UInt8](repeating: 0, count: 514)) }
        #expect(throws: EntryBundle.Failure.truncated(offset: 0)) { try EntryBundle.parse([0]) }
        #expect(throws: EntryBundle.Failure.truncated(offset: 3)) { try EntryBundle.parse([0, 1, 9, 0, 2, 1]) }
        #expect(throws: EntryBundle.Failure.truncated(offset: 0)) { try EntryBundle.parse([0xFF, 0xFF]) }
    }
}
