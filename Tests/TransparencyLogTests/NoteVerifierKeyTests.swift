import Crypto
import Testing
import TransparencyLog

/// Key names, key IDs and verifier keys (c2sp.org/signed-note "Format", "Ed25519 signatures", "Verifier keys").
@Suite("Note verifier keys")
struct NoteVerifierKeyTests {
    /// A signer from a fixed seed: `seed` repeated 32 times.
    static func signer(_ name: String, seed: UInt8 = 7) throws -> NoteSigner {
        try NoteSigner(
            name: name,
            privateKey: Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: seed, count: 32))
        )
    }

    @Test("the spec's vkey example: its key ID is recomputed from name and key, and it renders back exactly")
    func specExample() throws {
        let key = try NoteVerifierKey(parsing: SpecExamples.fooVKey)
        #expect(key.name == "example.com/foo")
        #expect(key.keyID == 0x530d_903a)
        #expect(NoteVerifierKey.keyID(name: key.name, publicKey: key.publicKeyBytes) == 0x530d_903a)
        #expect(key.publicKeyBytes.count == 32)
        #expect(key.vkey == SpecExamples.fooVKey)
        #expect(try NoteVerifierKey(name: "example.com/foo", publicKey: key.publicKey) == key)
    }

    @Test("a vkey whose base64 key holds '+' is read: only the name cannot hold one")
    func plusInKey() throws {
        var seed: UInt8 = 0
        var signer = try Self.signer("log.example/plus", seed: seed)
        while !signer.verifierKey.vkey.split(separator: "+", maxSplits: 2)[2].contains("+") {
            seed += 1
            signer = try Self.signer("log.example/plus", seed: seed)
        }
        #expect(try NoteVerifierKey(parsing: signer.verifierKey.vkey) == signer.verifierKey)
    }

    @Test(
        "key names: non-empty, no Unicode space, no plus, no control character",
        arguments: [
            ("example.com/abc123", true), ("quasimodo.example/salvatore", true), ("\u{E8}t\u{E9}", true),
            ("", false), ("a b", false), ("a+b", false), ("a\tb", false), ("a\nb", false), ("a\u{A0}b", false),
            ("a\u{2003}b", false), ("a\u{3000}b", false), ("a\u{85}b", false), ("a\u{2028}b", false),
            ("a\u{0}b", false), ("a\u{1B}b", false),
        ]
    )
    func keyNames(name: String, valid: Bool) throws {
        #expect(NoteVerifierKey.isValidKeyName(name) == valid)
        let key = Curve25519.Signing.PrivateKey().publicKey
        if valid {
            #expect(throws: Never.self) { try NoteVerifierKey(name: name, publicKey: key) }
        } else {
            #expect(throws: NoteVerifierKey.Failure.invalidKeyName) { try NoteVerifierKey(name: name, publicKey: key) }
        }
    }

    @Test("malformed vkeys are refused with the rule they break")
    func malformed() throws {
        let good = SpecExamples.fooVKey
        let key = "AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
        let cases: [(String, NoteVerifierKey.Failure)] = [
            ("", .malformedVerifierKey),
            ("example.com/foo", .malformedVerifierKey),
            ("example.com/foo+530d903a", .malformedVerifierKey),
            ("example.com/foo+530d903a" + key, .malformedVerifierKey),
            ("example.com/foo+530d903+" + key, .malformedVerifierKey),
            ("+530d903a+" + key, .invalidKeyName),
            ("exa mple+530d903a+" + key, .invalidKeyName),
            ("example.com/foo+530D903A+" + key, .malformedKeyID),
            ("example.com/foo+530d903g+" + key, .malformedKeyID),
            ("example.com/foo+530d903a+", .malformedKey),
            ("example.com/foo+530d903a+" + key.dropLast(), .malformedKey),
            ("example.com/foo+530d903a+" + key + "=", .malformedKey),
            ("example.com/foo+530d903a+" + key + " ", .malformedKey),
            ("example.com/foo+530d903a+BEkyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", .unsupportedSignatureType(0x04)),
            ("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv", .wrongKeyLength(29)),
            ("example.com/bar+530d903a+" + key, .keyIDMismatch(stated: 0x530d_903a, computed: try Self.id("bar"))),
            ("example.com/foo+530d903b+" + key, .keyIDMismatch(stated: 0x530d_903b, computed: 0x530d_903a)),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text)") { try NoteVerifierKey(parsing: text) }
        }
        #expect(throws: Never.self) { try NoteVerifierKey(parsing: good) }
    }

    /// The key ID of the spec example's key under `example.com/<name>`.
    static func id(_ name: String) throws -> UInt32 {
        let key = try NoteVerifierKey(parsing: SpecExamples.fooVKey)
        return NoteVerifierKey.keyID(name: "example.com/\(name)", publicKey: key.publicKeyBytes)
    }

    @Test("every description names the problem")
    func descriptions() {
        let failures: [NoteVerifierKey.Failure] = [
            .invalidKeyName, .malformedVerifierKey, .malformedKeyID, .malformedKey, .unsupportedSignatureType(4),
            .wrongKeyLength(31), .keyIDMismatch(stated: 1, computed: 2),
        ]
        for failure in failures { #expect(!failure.description.isEmpty) }
        #expect(NoteVerifierKey.Failure.unsupportedSignatureType(4).description.contains("0x04"))
        #expect(NoteVerifierKey.Failure.keyIDMismatch(stated: 1, computed: 2).description.contains("00000001"))
    }
}
