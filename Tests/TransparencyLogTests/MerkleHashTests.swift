import Foundation
import Testing
import TransparencyLog

@Suite("MerkleHash")
struct MerkleHashTests {
    @Test("the empty tree, a leaf and a node hash as RFC 6962 section 2.1 says (values of transparency-dev/merkle)")
    func rfc6962() {
        // SHA-256 of nothing.
        #expect(hex(MerkleHash.empty) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // SHA-256(0x00): the leaf hash of an empty leaf.
        #expect(hex(MerkleHash.leaf([])) == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")
        // SHA-256(0x00 || "L123456").
        #expect(
            hex(MerkleHash.leaf(Array("L123456".utf8)))
                == "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
        )
        // SHA-256(0x01 || "N123" || "N456").
        #expect(
            hex(MerkleHash.node(Array("N123".utf8), Array("N456".utf8)))
                == "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"
        )
    }

    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
