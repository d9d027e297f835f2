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

    @Test("validation's single pass over the attributes accepts exactly what the documented-order checks accept")
    func validationFastPath() throws {
        var catalogue = EventCatalogue.builtIn
        try catalogue.add(
            .init(
                name: "MIXED_EVENT",
                priority: .routine,
                attributes: [
                    "count": .init(type: .integer, minimum: 0, maximum: 9),
                    "label": .init(type: .string, required: false, maxLength: 4, allowedValues: ["a", "bb", "long!"]),
                    "details": .init(type: .object, required: false),
                    "list": .init(type: .array, required: false),
                ]
            )
        )
        try catalogue.add(
            .init(
                name: "OPEN_EVENT",
                priority: .routine,
                attributes: ["count": .init(type: .integer)],
                additionalAttributes: true
            )
        )
        let names = ["count", "label", "details", "list", "extra", "pinLength", "pin", "apiKey", "unlockDurationMs"]
        let values: [JSONValue] = [
            .integer(3), .integer(12), .integer(-1), .string("a"), .string("long!"), .string("zz"), .bool(true), .null,
            .object([:]), .object(["note": .string("x")]), .object(["sessionToken": .string("x")]),
            .array([.object(["password": .string("x")])]), .array([.integer(1)]),
        ]
        let identifiers = ["u", "", String(repeating: "x", count: EventCatalogue.maxIdentifierBytes + 1)]
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for index in 0..<20_000 {
            // A valid event of its type, then up to three random changes (some keep it valid).
            let type = ["MIXED_EVENT", "OPEN_EVENT", "BIOMETRIC_AUTH_SUCCESS"][index % 3]
            var attributes: [String: JSONValue] =
                type == "BIOMETRIC_AUTH_SUCCESS" ? ["unlockDurationMs": .integer(412)] : ["count": .integer(3)]
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let name = names.randomElement(using: &generator)!
                attributes[name] = Bool.random(using: &generator) ? values.randomElement(using: &generator)! : nil
            }
            let event = AuditEvent(
                type: type,
                occurredAt: AuditTimestamp(millisecondsSinceEpoch: index % 97 == 0 ? -1 : 1_795_000_000_000),
                userId: index % 50 == 0 ? identifiers.randomElement(using: &generator)! : "u",
                deviceId: index % 51 == 0 ? identifiers.randomElement(using: &generator)! : "d",
                attributes: attributes,
                idempotencyKey: index % 52 == 0 ? identifiers.randomElement(using: &generator)! : "k\(index)"
            )
            let passes = (try? catalogue.validated(event)) != nil
            let reference = (try? catalogue.reportFirstProblem(event)) != nil
            #expect(passes == reference, "\(event.type) \(attributes)")
            if passes { accepted += 1 }
        }
        // Both outcomes occur often enough for the comparison to mean something.
        #expect(accepted > 2_000 && accepted < 18_000, "\(accepted) of 20 000 accepted")
    }
}
