import FuzzSupport
import Testing
import TransparencyLog

/// Proof hashes as text (one canonical base64 hash per line) and the canonical base64 they use.
@Suite("Proof hashes as text")
struct ProofHashesTests {
    static let hashes: [[UInt8]] = (0..<5).map { seed in (0..<32).map { UInt8(truncatingIfNeeded: $0 * 7 + seed) } }

    @Test("render and parse round-trip; the last newline may be missing; the empty text is the empty proof")
    func roundTrip() throws {
        let text = ProofHashes.render(Self.hashes)
        #expect(text.count == 5 * 45)
        #expect(try ProofHashes.parse(text) == Self.hashes)
        #expect(try ProofHashes.parse(Array(text.dropLast())) == Self.hashes)
        #expect(try ProofHashes.parse([]) == [])
        #expect(try ProofHashes.parse([0x0A]) == [])
        #expect(ProofHashes.render([]) == [])
    }

    @Test("each rule broken is named with its line")
    func refusals() {
        let line = ProofHashes.base64(Self.hashes[0])
        let cases: [(String, ProofHashes.Failure)] = [
            ("\(line)\n\n", .malformedHash(line: 2)),
            ("\n\n", .malformedHash(line: 1)),
            ("\(line)\r\n", .malformedHash(line: 1)),
            (" \(line)\n", .malformedHash(line: 1)),
            // 32 zero bytes are 43 "A" and "="; a last "B" sets an unused bit: not canonical.
            ("\(line)\n" + String(repeating: "A", count: 42) + "B=\n", .malformedHash(line: 2)),
            ("\(line)\n\(line.dropLast())A\n", .malformedHash(line: 2)),
            ("\(line.dropLast())\n", .malformedHash(line: 1)),
            ("AAAA\n", .malformedHash(line: 1)),
            (ProofHashes.base64([UInt8](repeating: 1, count: 33)) + "\n", .malformedHash(line: 1)),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text)") { try ProofHashes.parse(Array(text.utf8)) }
        }
        let three = ProofHashes.render(Array(Self.hashes.prefix(3)))
        #expect((try? ProofHashes.parse(three, maxHashes: 3))?.count == 3)
        #expect(throws: ProofHashes.Failure.tooLarge(size: 135, limit: 90)) {
            try ProofHashes.parse(three, maxHashes: 2)
        }
        #expect(throws: ProofHashes.Failure.tooLarge(size: 134, limit: 90)) {
            try ProofHashes.parse(Array(three.dropLast()), maxHashes: 2)
        }
        #expect(throws: ProofHashes.Failure.tooLarge(size: 1000, limit: 90)) {
            try ProofHashes.parse([UInt8](repeating: 0x41, count: 1000), maxHashes: 2)
        }
    }

    @Test("canonical base64 only: padding present, unused bits zero, the standard alphabet")
    func base64() {
        #expect(ProofHashes.bytes(base64: Array("AAE=".utf8)) == [0, 1])
        #expect(ProofHashes.bytes(base64: Array("AAF=".utf8)) == nil)
        #expect(ProofHashes.bytes(base64: Array("AAE".utf8)) == nil)
        #expect(ProofHashes.bytes(base64: Array("-_8=".utf8)) == nil)
        #expect(ProofHashes.bytes(base64: Array("+/8=".utf8)) == [0xFB, 0xFF])
        #expect(ProofHashes.bytes(base64: []) == [])
        #expect(ProofHashes.hash(base64: Array(ProofHashes.base64(Self.hashes[1]).utf8)) == Self.hashes[1])
        #expect(ProofHashes.hash(base64: Array("AAE=".utf8)) == nil)
        #expect(
            ProofHashes.hash(base64: Array((String(repeating: "A", count: 43) + "=").utf8))
                == Array(repeating: 0, count: 32)
        )
    }

    @Test("mutated texts: the parser returns or throws, never traps, and what it accepts renders back")
    func mutated() {
        let seed = ProofHashes.render(Self.hashes)
        var random = FuzzRandom(seed: 22)
        var broken: [[UInt8]] = []
        for _ in 0..<20_000 {
            let input = FuzzMutator.mutate(seed, corpus: [seed], random: &random)
            if let parsed = try? ProofHashes.parse(input) {
                // The text renders back, but for a missing last newline.
                let rendered = ProofHashes.render(parsed)
                if rendered != input && rendered != input + [0x0A] && input != [0x0A] { broken.append(input) }
            }
        }
        #expect(broken.isEmpty, "\(broken.prefix(3))")
    }
}
