import AuditChain
import Crypto
import Foundation
import Testing

/// Reproduces docs/test-vectors/chain-v2.json (format version 2) byte for byte, and checks that the stored chains
/// verify with only the genesis key pinned and that each tampered copy gives exactly its documented findings.
/// AUDIT_WRITE_VECTORS=1 rewrites the file (``VectorDocument/expectReproduced(_:file:)``).
@Suite("Test vectors, format version 2")
struct TestVectorV2Tests {
    @Test("the version 2 test vectors are reproduced exactly")
    func vectorsReproduce() throws {
        try VectorDocument.expectReproduced(VectorChainV2.document(), file: VectorChainV2.file)
    }

    @Test("the stored chains verify, with the report the vectors state, in full and fast mode")
    func storedChainsVerify() throws {
        let members = try #require(VectorDocument.load(VectorChainV2.file).objectValue)
        let keys = try #require(members["keys"]?.objectValue)
        let genesisKey = try #require(VectorDocument.hex(keys["epochPublicKeys"].flatMap(Self.first)))
        let migrated = try #require(members["migrated"]?.objectValue)
        let chains: [(entries: JSONValue?, pinned: [UInt8]?, report: JSONValue?)] = [
            (members["entries"], genesisKey, members["report"]),
            (migrated["entries"], VectorDocument.hex(migrated["pinnedPublicKey"]), migrated["report"]),
        ]
        for (entriesJSON, pinned, reportJSON) in chains {
            guard case .array(let entries)? = entriesJSON else {
                Issue.record("no entries")
                continue
            }
            let serialized = try VectorDocument.entries(.array(entries.map { $0.objectValue?["serialized"] ?? .null }))
            let expected = try #require(reportJSON?.objectValue)
            for fast in [false, true] {
                var options = try Self.options(members, pinned: try #require(pinned))
                options.fast = fast
                let report = ChainFixture.verify(serialized, options: options)
                #expect(report.isClean, "\(report.problems)")
                #expect(report.payloadsOpened == entries.count { $0.objectValue?["kind"] == "event" })
                #expect(report.closed && expected["closed"] == .bool(true))
                #expect(expected["epochs"]?.integerValue == Int64(report.epochs))
                #expect(expected["formatVersion"]?.integerValue == Int64(report.formatVersion))
                #expect(expected["lastEpochTime"]?.integerValue == report.lastEpochTime?.millisecondsSinceEpoch)
                // Fast mode checks version 1 signatures only at anchors (docs/FORMAT.md, section 10).
                if !fast { #expect(expected["signaturesChecked"]?.integerValue == Int64(report.signaturesChecked)) }
            }
        }
    }

    @Test("each tampered copy gives exactly the documented findings")
    func tamperedCopies() throws {
        let members = try #require(VectorDocument.load(VectorChainV2.file).objectValue)
        guard case .array(let cases)? = members["tampered"] else {
            Issue.record("no tampered cases")
            return
        }
        #expect(cases.count >= 12)
        let checkpoint = try SignedCheckpoint(json: try #require(members["checkpoint"]))
        for tamperCase in cases {
            let object = try #require(tamperCase.objectValue)
            var options = try Self.options(members, pinned: try #require(VectorDocument.hex(object["pinnedPublicKey"])))
            if object["checkpoint"] == .bool(true) { options.trustedCheckpoint = checkpoint }
            options.referenceTime = object["referenceTime"]?.integerValue.map {
                AuditTimestamp(millisecondsSinceEpoch: $0)
            }
            let report = ChainFixture.verify(try VectorDocument.entries(object["entries"]), options: options)
            let expected = try #require(VectorDocument.expectedFindings(object))
            #expect(report.findings == expected, "\(object["description"]?.stringValue ?? "")")
        }
    }

    @Test("the subjects part: A's events count as erased with B's key given; a forged erasure erases nothing")
    func subjects() throws {
        let members = try #require(VectorDocument.load(VectorChainV2.file).objectValue)
        let subjects = try #require(members["subjects"]?.objectValue)
        let genesisKey = try #require(
            VectorDocument.hex(members["keys"]?.objectValue?["epochPublicKeys"].flatMap(Self.first))
        )
        var options = try Self.options(members, pinned: genesisKey)
        options.dataKeys.append(try DataKey(rawRepresentation: VectorDocument.hex(subjects["contentKeyB"]) ?? []))
        guard case .array(let entries)? = subjects["entries"] else {
            Issue.record("no subject entries")
            return
        }
        let serialized = try VectorDocument.entries(.array(entries.map { $0.objectValue?["serialized"] ?? .null }))
        let report = ChainFixture.verify(serialized, options: options)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.payloadsOpened == 3 && report.activeHoldSeq == nil)
        #expect(report.erasures.map { [$0.recordSeq, UInt64($0.entriesErased)] } == [[9, 3]])
        let forged = try #require(subjects["forged"]?.objectValue)
        let forgedReport = ChainFixture.verify(try VectorDocument.entries(forged["entries"]), options: options)
        #expect(forgedReport.findings == (try #require(VectorDocument.expectedFindings(forged))))
        #expect(forgedReport.erasures.isEmpty)
    }

    @Test("the stored files are in the pretty form AUDIT_WRITE_VECTORS writes")
    func storedFormIsPretty() throws {
        for name in [TestVectorTests.file, VectorChainV2.file] {
            let text = try String(contentsOf: VectorDocument.url(name), encoding: .utf8)
            #expect(text == VectorDocument.pretty(try VectorDocument.load(name)) + "\n", "\(name)")
        }
        #expect(
            VectorDocument.pretty(.object(["b": .array([]), "a": .object([:])])) == "{\n  \"a\": {},\n  \"b\": []\n}"
        )
    }

    @Test("a vector file that lacks its entries is refused, not read as an empty chain")
    func missingEntries() {
        #expect(throws: VectorDocument.VectorError.self) { try VectorDocument.entries(nil) }
        #expect(throws: VectorDocument.VectorError.self) { try VectorDocument.entries(.array(["0g"])) }
        #expect(VectorDocument.hex(.string("abc")) == nil)
    }

    /// Options pinning `pinned`, with the vectors' data key.
    static func options(_ members: [String: JSONValue], pinned: [UInt8]) throws -> ChainVerifier.Options {
        var options = ChainVerifier.Options(trustedKeys: [try Curve25519.Signing.PublicKey(rawRepresentation: pinned)])
        let keys = members["keys"]?.objectValue
        options.dataKeys = [try DataKey(rawRepresentation: VectorDocument.hex(keys?["dataKey"]) ?? [])]
        return options
    }

    static func first(_ value: JSONValue) -> JSONValue? {
        guard case .array(let items) = value else { return nil }
        return items.first
    }
}
