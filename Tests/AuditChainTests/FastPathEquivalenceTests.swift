@testable import AuditChain
import Testing

/// The fast paths of the performance work must agree with the plain definitions they replace.
@Suite("Fast-path equivalence")
struct FastPathEquivalenceTests {
    /// The reference rule, straight from docs/CATALOGUE.md: words of the name, a secret word anywhere unless the
    /// last word is a metadata word (and there is more than one word).
    static func referenceSecretWord(_ name: String) -> String? {
        let words = SecretAttributeRule.words(of: name)
        guard let last = words.last, !SecretAttributeRule.metadataWords.contains(last) || words.count == 1 else {
            return nil
        }
        return words.first(where: SecretAttributeRule.secretWords.contains)
    }

    @Test("the ASCII fast path of the secret-attribute rule gives the same word as the reference rule")
    func secretWordFastPath() {
        var generator = SystemRandomNumberGenerator()
        let pieces =
            Array(SecretAttributeRule.secretWords) + Array(SecretAttributeRule.metadataWords) + [
                "user", "Id", "ID", "count", "_", "-", ".", "2", "x", "Pin", "PIN", "pass", "Word", "é", "Ωmega", " ",
            ]
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...4, using: &generator)
            let name = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(SecretAttributeRule.secretWord(in: name) == Self.referenceSecretWord(name), "\(name)")
        }
    }

    @Test("the direct canonical payload equals the canonical bytes of the event's JSON value")
    func canonicalPayload() {
        let strings = ["plain", "quote\"back\\slash", "tab\tnew\nline\u{1}", "é日本🙂", "", "\u{7f}\u{2028}"]
        for index in 0..<500 {
            let text = strings[index % strings.count] + String(index)
            let event = AuditEvent(
                type: "T_\(index % 7)",
                occurredAt: AuditTimestamp(millisecondsSinceEpoch: Int64(index) * 997_331 - 5_000_000),
                userId: text,
                deviceId: strings[(index + 1) % strings.count],
                attributes: [
                    text: .integer(Int64(index) - 250), "b": .bool(index % 2 == 0), "n": .null,
                    "nested": .object(["z": .array([.string(text), .integer(JSONValue.maxSafeInteger)])]),
                ],
                idempotencyKey: "k\(index)"
            )
            #expect(event.canonicalPayload == event.jsonValue.canonicalBytes)
        }
    }

    @Test("the stored entry hash follows changes to header and digest, and parsing gives the same hash")
    func storedEntryHash() throws {
        var chain = ChainFixture()
        _ = chain.appendEvents(3)
        chain.appendCheckpoint()
        for original in chain.entries {
            let parsed = try SealedEntry(serialized: original.serialized)
            #expect(parsed.entryHash == original.entryHash)
            #expect(
                parsed.entryHash
                    == SealedEntry.entryHash(header: parsed.header.encoded, payloadDigest: parsed.payloadDigest)
            )
            var changed = parsed
            changed.header.seq += 1
            #expect(
                changed.entryHash
                    == SealedEntry.entryHash(header: changed.header.encoded, payloadDigest: changed.payloadDigest)
            )
            changed.payloadDigest[0] ^= 1
            #expect(
                changed.entryHash
                    == SealedEntry.entryHash(header: changed.header.encoded, payloadDigest: changed.payloadDigest)
            )
        }
    }
}
