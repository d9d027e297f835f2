import AuditChain
import AuditStore
import AuditWire
import FuzzSupport
import Testing

/// The hostile-integer corpus through every parser in process: `-9223372036854775808` (which trapped
/// `abs` in the JSON parser) and the other extremes, in every value position of every seed document. Each parser
/// returns an error; none traps.
@Suite("Hostile integers in every position")
struct HostileIntegerTests {
    /// A surface: its corpus and a parse that reports whether it accepted the input.
    struct Surface: Sendable, CustomStringConvertible {
        var corpus: String
        var linewise = false
        var accepts: @Sendable ([UInt8]) -> Bool
        var description: String { corpus }
    }

    static let now = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    static func json(_ bytes: [UInt8]) -> JSONValue? { try? JSONValue(parsing: bytes) }

    static let surfaces: [Surface] = [
        Surface(corpus: "json") { json($0) != nil },
        Surface(corpus: "event-input") {
            (try? AuditEvent.decodeInput($0, catalogue: .builtIn, now: now, makeIdempotencyKey: { "k" })) != nil
        },
        Surface(corpus: "event-payload") { (try? AuditEvent(canonicalPayload: $0)) != nil },
        Surface(corpus: "system-record") { bytes in
            RecordKind.allCases.contains { (try? SystemRecord(kind: $0, payload: bytes)) != nil }
        },
        Surface(corpus: "checkpoint") { bytes in json(bytes).flatMap { try? SignedCheckpoint(json: $0) } != nil },
        Surface(corpus: "catalogue") { (try? EventCatalogue.builtIn.adding(json: $0)) != nil },
        Surface(corpus: "sync-batch") { bytes in json(bytes).flatMap { try? SyncBatch(json: $0) } != nil },
        Surface(corpus: "sync-response") { bytes in json(bytes).flatMap { try? SyncResponse(json: $0) } != nil },
        Surface(corpus: "receipt") { bytes in json(bytes).flatMap { try? CollectorReceipt(json: $0) } != nil },
        Surface(corpus: "tree-receipt") { bytes in json(bytes).flatMap { try? TreeReceipt(json: $0) } != nil },
        Surface(corpus: "public-key-file") { (try? PublicKeyFile.parse($0)) != nil },
        Surface(corpus: "bundle", linewise: true) { line in
            (try? LogBundle.Header(line: line)) != nil || (try? LogBundle.entry(line: line, lineNumber: 1)) != nil
        },
    ]

    @Test("every surface refuses a hostile number in any value position", arguments: surfaces)
    func refusesHostileNumbers(surface: Surface) throws {
        let seeds = Fuzz.corpus(surface.corpus)
        try #require(!seeds.isEmpty)
        var accepted: [String] = []
        var variants = 0
        for seed in seeds {
            let documents =
                surface.linewise
                ? seed.split(separator: 0x0a).map(Array.init) : [seed]
            for document in documents {
                #expect(surface.accepts(document), "the seed itself must parse")
                for variant in HostileIntegers.variants(of: document) {
                    variants += 1
                    if surface.accepts(variant) {
                        accepted.append(String(decoding: variant.prefix(300), as: UTF8.self))
                    }
                }
            }
        }
        print("hostile integers, \(surface.corpus): \(variants) documents refused")
        #expect(accepted.isEmpty, "accepted: \(accepted.prefix(3))")
        #expect(variants > 0)
    }

    @Test("the JSON parser refuses each hostile number alone and inside containers, with a readable error")
    func jsonParserAlone() {
        for number in HostileIntegers.numbers {
            for document in [number, "[\(number)]", "{\"a\":\(number)}", "[1,{\"b\":[\(number),2]}]"] {
                #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Array(document.utf8)) }
            }
        }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Array("-9223372036854775808".utf8)) }
        #expect((try? JSONValue(parsing: Array("-9007199254740991".utf8))) == .integer(-9_007_199_254_740_991))
        #expect((try? JSONValue(parsing: Array("-0".utf8))) == .integer(0))
    }
}
