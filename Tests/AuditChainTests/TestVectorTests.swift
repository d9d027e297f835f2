import AuditChain
import Crypto
import Foundation
import Testing

/// Reproduces docs/test-vectors/chain-v1.json byte for byte: keys, headers, ciphertexts, hashes, signatures,
/// and the findings expected for the tampered copies. Set AUDIT_WRITE_VECTORS=1 to rewrite the file (then
/// review the diff: a change to it is a change to the format).
@Suite("Test vectors")
struct TestVectorTests {
    static let vectorURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/test-vectors/chain-v1.json")

    @Test("the format test vectors are reproduced exactly")
    func vectorsReproduce() throws {
        let generated = VectorChain.document()
        if ProcessInfo.processInfo.environment["AUDIT_WRITE_VECTORS"] == "1" {
            try Data(generated.canonicalBytes).write(to: Self.vectorURL)
        }
        let stored = try JSONValue(parsing: Array(Data(contentsOf: Self.vectorURL)))
        guard case .object(let storedMembers) = stored, case .object(let generatedMembers) = generated else {
            Issue.record("vector file is not an object")
            return
        }
        #expect(storedMembers.keys.sorted() == generatedMembers.keys.sorted())
        for key in generatedMembers.keys.sorted() {
            #expect(storedMembers[key] == generatedMembers[key], "member \(key) differs from the generated vectors")
        }
    }

    @Test("the stored vectors verify, and their tampered copies give the documented findings")
    func storedVectorsVerify() throws {
        let stored = try JSONValue(parsing: Array(Data(contentsOf: Self.vectorURL)))
        let members = try #require(stored.objectValue)
        let keys = try #require(members["keys"]?.objectValue)
        let publicKey = try Curve25519.Signing.PublicKey(
            rawRepresentation: try #require(hex(keys["signingPublicKey"]))
        )
        guard case .array(let entries)? = members["entries"] else {
            Issue.record("no entries")
            return
        }
        let serialized = try entries.map { try #require(hex($0.objectValue?["serialized"])) }
        var options = ChainVerifier.Options(trustedKeys: [publicKey])
        options.dataKeys = [
            try DataKey(rawRepresentation: try #require(hex(keys["dataKey"]))),
            try DataKey(rawRepresentation: try #require(hex(keys["rotatedDataKey"]))),
        ]
        options.trustedCheckpoint = try SignedCheckpoint(json: try #require(members["checkpoint"]))
        #expect(ChainFixture.verify(serialized, options: options).isClean)

        guard case .array(let cases)? = members["tampered"] else {
            Issue.record("no tampered cases")
            return
        }
        #expect(cases.count >= 6)
        for tamperCase in cases {
            let object = try #require(tamperCase.objectValue)
            guard case .array(let tamperedEntries)? = object["entries"], case .array(let expected)? = object["expected"]
            else {
                Issue.record("bad tampered case")
                continue
            }
            let bytes = try tamperedEntries.map { try #require(hex($0)) }
            let report = ChainFixture.verify(bytes, options: options)
            let expectedFindings = expected.compactMap { item -> String? in
                guard let seq = item.objectValue?["seq"]?.integerValue,
                    let kind = item.objectValue?["kind"]?.stringValue
                else { return nil }
                return "\(seq):\(kind)"
            }
            #expect(report.findings == expectedFindings, "\(object["description"]?.stringValue ?? "")")
        }
    }

    func hex(_ value: JSONValue?) -> [UInt8]? {
        guard let text = value?.stringValue else { return nil }
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
}
