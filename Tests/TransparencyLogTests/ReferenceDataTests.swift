import Foundation
import Testing
import TransparencyLog

/// The RFC 6962 proof cases of transparency-dev/merkle (docs/test-vectors/transparency-dev): each is accepted
/// exactly when the reference says it should be.
@Suite("RFC 6962 reference data (transparency-dev)")
struct ReferenceDataTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/test-vectors/transparency-dev")

    /// Every case file under `folder`, parsed.
    static func cases(_ folder: String) throws -> [(name: String, fields: [String: Any])] {
        let base = root.appendingPathComponent(folder)
        let files =
            FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" } ?? []
        return try files.sorted { $0.path < $1.path }.map { url in
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
            return (String(url.path.dropFirst(base.path.count + 1)), object)
        }
    }

    static func bytes(_ value: Any?) -> [UInt8] {
        (value as? String).flatMap { Data(base64Encoded: $0) }.map { Array($0) } ?? []
    }

    static func hashes(_ value: Any?) -> [[UInt8]] { (value as? [String] ?? []).map { bytes($0) } }

    static func number(_ value: Any?) -> UInt64 { (value as? NSNumber)?.uint64Value ?? 0 }

    @Test("inclusion: every case accepted exactly when wantErr is false")
    func inclusion() throws {
        let cases = try Self.cases("inclusion")
        #expect(cases.count >= 80)
        for (name, fields) in cases {
            let accepted: Bool
            do {
                try MerkleProof.verifyInclusion(
                    leafHash: Self.bytes(fields["leafHash"]),
                    index: Self.number(fields["leafIdx"]),
                    size: Self.number(fields["treeSize"]),
                    proof: Self.hashes(fields["proof"]),
                    root: Self.bytes(fields["root"])
                )
                accepted = true
            } catch {
                accepted = false
            }
            #expect(accepted == !(fields["wantErr"] as? Bool ?? true), "\(name)")
        }
    }

    @Test("consistency: every case accepted exactly when wantErr is false")
    func consistency() throws {
        let cases = try Self.cases("consistency")
        #expect(cases.count >= 90)
        for (name, fields) in cases {
            let accepted: Bool
            do {
                try MerkleProof.verifyConsistency(
                    first: Self.number(fields["size1"]),
                    second: Self.number(fields["size2"]),
                    firstRoot: Self.bytes(fields["root1"]),
                    secondRoot: Self.bytes(fields["root2"]),
                    proof: Self.hashes(fields["proof"])
                )
                accepted = true
            } catch {
                accepted = false
            }
            #expect(accepted == !(fields["wantErr"] as? Bool ?? true), "\(name)")
        }
    }

    /// The eight leaves of the reference tree (RFC 6962's test tree as Certificate Transparency uses it).
    static let leaves: [[UInt8]] = [
        [], [0x00], [0x10], [0x20, 0x21], [0x30, 0x31], [0x40, 0x41, 0x42, 0x43],
        [0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57], Array(0x60...0x6f),
    ]

    @Test("the tree of the reference leaves gives the reference roots and proofs of every happy path")
    func happyPathsRebuilt() throws {
        let tree = MerkleTree(leaves: Self.leaves)
        var checked = 0
        for (name, fields) in try Self.cases("inclusion") where fields["wantErr"] as? Bool == false {
            let size = Self.number(fields["treeSize"])
            let index = Self.number(fields["leafIdx"])
            guard size <= 8, index < size, Self.bytes(fields["leafHash"]) == tree.leafHashes[Int(index)] else {
                continue
            }
            #expect(tree.root(size: size) == Self.bytes(fields["root"]), "\(name)")
            #expect(tree.inclusionProof(index: index, size: size) == Self.hashes(fields["proof"]), "\(name)")
            checked += 1
        }
        for (name, fields) in try Self.cases("consistency") where fields["wantErr"] as? Bool == false {
            let first = Self.number(fields["size1"])
            let second = Self.number(fields["size2"])
            guard second <= 8, first > 0, tree.root(size: first) == Self.bytes(fields["root1"]) else { continue }
            #expect(tree.root(size: second) == Self.bytes(fields["root2"]), "\(name)")
            #expect(tree.consistencyProof(first: first, second: second) == Self.hashes(fields["proof"]), "\(name)")
            checked += 1
        }
        #expect(checked >= 8)
    }
}
