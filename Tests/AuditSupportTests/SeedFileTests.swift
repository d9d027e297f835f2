import AuditSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SeedFileTests {
    /// A stand-in key: its 32-byte seed.
    struct Key: Equatable {
        var seed: [UInt8]
    }

    static func parse(_ bytes: [UInt8]) -> Key? { bytes.count == 32 ? Key(seed: bytes) : nil }

    static func generate() -> (key: Key, seed: [UInt8]) {
        let seed = (0..<32).map { _ in UInt8.random(in: 0 ... .max) }
        return (Key(seed: seed), seed)
    }

    @Test("a missing seed file is created with mode 0600 and the same key is loaded again")
    func createThenLoad() throws {
        let scratch = try Scratch()
        let path = scratch.file("collector.key")
        #expect(try SeedFile.load(path: path, what: "collector key file", parse: Self.parse) == nil)
        let key = try SeedFile.loadOrCreate(
            path: path,
            what: "collector key file",
            generate: Self.generate,
            parse: Self.parse
        )
        #expect(Scratch.mode(path) == 0o600)
        #expect(try SeedFile.load(path: path, what: "collector key file", parse: Self.parse) == key)
        let again = try SeedFile.loadOrCreate(
            path: path,
            what: "collector key file",
            generate: Self.generate,
            parse: Self.parse
        )
        #expect(again == key)
    }

    @Test("a shared seed file, one that holds no key and one that cannot be created are refused, each saying why")
    func refused() throws {
        let scratch = try Scratch()
        let shared = scratch.file("shared.key")
        try Data(repeating: 1, count: 32).write(to: URL(fileURLWithPath: shared))
        chmod(shared, 0o644)
        let unsafe = #expect(throws: SecretFile.Failure.self) {
            try SeedFile.loadOrCreate(
                path: shared,
                what: "witness key file",
                generate: Self.generate,
                parse: Self.parse
            )
        }
        #expect(unsafe?.kind == .unsafe)
        #expect(unsafe?.description.hasPrefix("witness key file \(shared) is accessible by group or others") == true)
        let short = try scratch.write("short.key", "abc", mode: 0o600)
        #expect(throws: SecretFile.Failure(.invalid, "\(short) is not a 32-byte Ed25519 seed (3 bytes)")) {
            try SeedFile.load(path: short, what: "witness key file", parse: Self.parse)
        }
        let nowhere = scratch.file("no/such/dir/key")
        let failure = #expect(throws: SecretFile.Failure.self) {
            try SeedFile.loadOrCreate(
                path: nowhere,
                what: "witness key file",
                generate: Self.generate,
                parse: Self.parse
            )
        }
        #expect(failure?.kind == .unreadable)
        #expect(failure?.description.hasPrefix("cannot create key file \(nowhere): ") == true)
    }
}
