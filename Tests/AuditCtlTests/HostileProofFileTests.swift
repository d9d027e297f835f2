import AuditChain
import Crypto
import Foundation
import TestKit
import Testing
import TransparencyLog

/// Hostile proof files against `auditctl verify-proof`: huge numbers, counts and junk, some of them signed by the
/// collector's own key so that they reach the inclusion check. Every one is refused with exit 1 and one FAILED line:
/// none traps (a trap would end the process by a signal, not with status 1).
@Suite("auditctl verify-proof: hostile files")
struct HostileProofFileTests {
    static let hash = ProofHashes.base64([UInt8](repeating: 0x5A, count: 32))

    /// Files that break the format, with the note of the fixture's checkpoint where one is needed.
    static func junk(_ fixture: ProofFixture) throws -> [[UInt8]] {
        let note = try fixture.checkpoint().bytes
        let entry = ProofHashes.base64(fixture.entries[2])
        func file(_ head: String) -> [UInt8] { Array(head.utf8) + note }
        var files: [[UInt8]] = [
            [],
            Array("c2sp.org/tlog-proof@v1\n".utf8),
            Array(TlogProof.header.utf8),
            file("c2sp.org/tlog-proof@v1\nindex 99999999999999999999\n\n"),
            file("c2sp.org/tlog-proof@v1\nindex 18446744073709551616\n\n"),
            file("c2sp.org/tlog-proof@v1\nindex -1\n\n"),
            file("c2sp.org/tlog-proof@v1\nindex 0x10\n\n"),
            file("c2sp.org/tlog-proof@v1\nextra \nindex 1\n\n"),
            file("c2sp.org/tlog-proof@v1\nextra !!!!\nindex 1\n\n"),
            file(
                "c2sp.org/tlog-proof@v1\nextra \(entry)\nindex 1\n" + String(repeating: "\(hash)\n", count: 65) + "\n"
            ),
            file("c2sp.org/tlog-proof@v1\nextra \(entry)\nindex 1\nAAAA\n\n"),
            file("c2sp.org/tlog-proof@v1\nextra \(entry)\nindex 1\n\(hash)"),
            file("c2sp.org/tlog-proof@v1\nextra AAAA\nindex 1\n\n"),
            Array("c2sp.org/tlog-proof@v1\nextra \(entry)\nindex 2\n\n\n\n\n".utf8),
            Array("c2sp.org/tlog-proof@v1\nindex 2\n\n".utf8) + [0xFF, 0xFE, 0x00, 0x0A, 0x0A],
            Array("c2sp.org/tlog-proof@v1\nindex 2\n\n".utf8) + Array(repeating: 0x0A, count: 1000),
            Array("c2sp.org/tlog-proof@v1\nindex 2\n\n".utf8)
                + Array(
                    ("origin\n1\n\(hash)\n\n" + String(repeating: "\u{2014} k AAAAAAAAAAAA\n", count: 101)).utf8
                ),
            // More than the 4 MiB a proof file may be.
            Array("c2sp.org/tlog-proof@v1\nextra ".utf8) + Array(repeating: UInt8(ascii: "A"), count: 5 << 20),
        ]
        var random = SystemRandomNumberGenerator()
        for length in [1, 100, 5000] {
            files.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        return files
    }

    /// Files that parse, signed by the collector's key, with extreme sizes and indexes.
    static func signedExtremes(_ fixture: ProofFixture) throws -> [TlogProof] {
        let entry = fixture.entries[2]
        let hashes = [[UInt8]](repeating: [UInt8](repeating: 0xA5, count: 32), count: 64)
        var proofs: [TlogProof] = []
        for (size, index, count) in [
            (UInt64.max, UInt64.max - 1, 63), (UInt64.max, UInt64.max, 64), (UInt64.max, 0, 64), (0, 0, 0),
            (1, 0, 0), (1, 0, 64), (1 << 63, (1 << 63) - 1, 63), (7, UInt64.max, 3),
        ] as [(UInt64, UInt64, Int)] {
            let checkpoint = try Checkpoint(origin: fixture.origin, size: size, rootHash: fixture.tree.root()!)
            let note = try checkpoint.sign(with: [NoteSigner(name: fixture.origin, privateKey: fixture.collectorKey)])
            proofs.append(
                try TlogProof(extra: entry, index: index, inclusionProof: Array(hashes.prefix(count)), note: note)
            )
        }
        return proofs
    }

    @Test("junk and extreme numbers: exit 1 with one FAILED line, never a trap")
    func hostileFiles() async throws {
        let fixture = try await ProofFixture.make()
        let files = try Self.junk(fixture) + Self.signedExtremes(fixture).map(\.bytes)
        for (number, bytes) in files.enumerated() {
            let file = try fixture.write(bytes, "hostile-\(number).proof")
            let result = try await fixture.verifyProof(file)
            #expect(result.status == 1, "file \(number): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stdout.hasPrefix("FAILED ("), "file \(number): \(result.stdout)")
            #expect(result.stdout.split(separator: "\n").count == 1, "file \(number): \(result.stdout)")
        }
    }

    @Test("a proof file from standard input: read as far as the limit, no further")
    func standardInput() async throws {
        let fixture = try await ProofFixture.make()
        let good = try fixture.proof(index: 1).bytes
        let result = try await CLIHarness.run(
            "auditctl",
            [
                "verify-proof", "-", "--collector-key", fixture.collectorPublicKey, "--public-key",
                fixture.devicePublicKey,
            ],
            stdin: String(decoding: good, as: UTF8.self)
        )
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    }
}
