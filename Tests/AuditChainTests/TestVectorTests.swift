import AuditChain
import Crypto
import Foundation
import Testing

/// Reproduces docs/test-vectors/chain-v1.json byte for byte: keys, headers, ciphertexts, hashes, signatures,
/// and the findings expected for the tampered copies. Set AUDIT_WRITE_VECTORS=1 to rewrite the file (then
/// review the diff: a change to it is a change to the format).
@Suite("Test vectors")
struct TestVectorTests {
    static let file = "chain-v1.json"

    @Test("the format test vectors are reproduced exactly")
    func vectorsReproduce() throws {
        try VectorDocument.expectReproduced(VectorChain.document(), file: Self.file)
    }

    @Test("the stored vectors verify, and their tampered copies give the documented findings")
    func storedVectorsVerify() throws {
        let members = try #require(VectorDocument.load(Self.file).objectValue)
        let keys = try #require(members["keys"]?.objectValue)
        let publicKey = try Curve25519.Signing.PublicKey(
            rawRepresentation: try #require(VectorDocument.hex(keys["signingPublicKey"]))
        )
        guard case .array(let entries)? = members["entries"] else {
            Issue.record("no entries")
            return
        }
        let serialized = try entries.map { try #require(VectorDocument.hex($0.objectValue?["serialized"])) }
        var options = ChainVerifier.Options(trustedKeys: [publicKey])
        options.dataKeys = [
            try DataKey(rawRepresentation: try #require(VectorDocument.hex(keys["dataKey"]))),
            try DataKey(rawRepresentation: try #require(VectorDocument.hex(keys["rotatedDataKey"]))),
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
            let bytes = try VectorDocument.entries(object["entries"])
            let report = ChainFixture.verify(bytes, options: options)
            let expected = try #require(VectorDocument.expectedFindings(object))
            #expect(report.findings == expected, "\(object["description"]?.stringValue ?? "")")
        }
    }
}
