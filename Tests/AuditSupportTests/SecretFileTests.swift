import AuditSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SecretFileTests {
    @Test("a private secret file is read; a missing one is nil, or refused with its role and path when required")
    func missing() throws {
        let scratch = try Scratch()
        let path = try scratch.write("token", "abc\n", mode: 0o600)
        #expect(try SecretFile.read(path, what: "token file", maxBytes: 64) == Array("abc\n".utf8))
        let absent = scratch.file("absent")
        #expect(try SecretFile.readIfPresent(absent, what: "token file", maxBytes: 64) == nil)
        #expect(throws: SecretFile.Failure(.missing, "cannot open token file \(absent): no such file")) {
            try SecretFile.read(absent, what: "token file", maxBytes: 64)
        }
    }

    @Test("a group- or other-readable file is refused with the chmod advice, whether required or optional")
    func unsafe() throws {
        let scratch = try Scratch()
        let path = try scratch.write("tls.key", "pem", mode: 0o640)
        let expected = SecretFile.Failure(
            .unsafe,
            "TLS key file \(path) is accessible by group or others (mode 640); it must be private: run `chmod 600 \(path)`"
        )
        #expect(throws: expected) { try SecretFile.read(path, what: "TLS key file", maxBytes: 64) }
        #expect(throws: expected) { try SecretFile.readIfPresent(path, what: "TLS key file", maxBytes: 64) }
    }

    @Test("a directory, a file past the bound and an unreadable file are refused, each saying which")
    func hostile() throws {
        let scratch = try Scratch()
        let folder = scratch.file("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o700)
        #expect(throws: SecretFile.Failure(.notRegular, "data key file \(folder) is not a regular file")) {
            try SecretFile.read(folder, what: "data key file", maxBytes: 64)
        }
        let large = try scratch.write("large", String(repeating: "x", count: 100), mode: 0o600)
        #expect(
            throws: SecretFile.Failure(
                .unreadable,
                "cannot read data key file \(large) (\(large) is larger than 64 bytes)"
            )
        ) { try SecretFile.read(large, what: "data key file", maxBytes: 64) }
        // A file in a directory that cannot be searched: open fails with EACCES (root reads it anyway).
        guard getuid() != 0 else { return }
        let locked = scratch.file("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        let inside = try scratch.write("locked/key", "k", mode: 0o600)
        chmod(locked, 0)
        defer { chmod(locked, 0o700) }
        let failure = #expect(throws: SecretFile.Failure.self) {
            try SecretFile.read(inside, what: "key file", maxBytes: 64)
        }
        #expect(failure?.kind == .unreadable)
        #expect(failure?.description.hasPrefix("cannot read key file \(inside) (cannot open \(inside): ") == true)
    }

    @Test("a symbolic link to a private file is read; to a shared one it is refused by the target's mode")
    func symbolicLink() throws {
        let scratch = try Scratch()
        let target = try scratch.write("target", "s", mode: 0o600)
        let link = scratch.file("link")
        #expect(symlink(target, link) == 0)
        #expect(try SecretFile.read(link, what: "key file", maxBytes: 64) == Array("s".utf8))
        chmod(target, 0o604)
        let failure = #expect(throws: SecretFile.Failure.self) {
            try SecretFile.read(link, what: "key file", maxBytes: 64)
        }
        #expect(failure?.kind == .unsafe)
        #expect(failure?.description.contains("chmod 600 \(link)") == true)
    }
}
