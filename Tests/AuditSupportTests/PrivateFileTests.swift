import AuditSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct PrivateFileTests {
    @Test("a private file is read whole; a missing one is nil; one group or others can read is refused by its mode")
    func read() throws {
        let scratch = try Scratch()
        let path = try scratch.write("key", "secret", mode: 0o600)
        #expect(try PrivateFile.read(path) == Array("secret".utf8))
        #expect(try PrivateFile.read(scratch.file("absent")) == nil)
        for mode: mode_t in [0o640, 0o604, 0o660, 0o601, 0o610] {
            chmod(path, mode)
            #expect(throws: PrivateFile.Failure.unsafe(mode: UInt32(mode))) { try PrivateFile.read(path) }
        }
        // The owner's own bits are the owner's business.
        chmod(path, 0o700)
        #expect(try PrivateFile.read(path) == Array("secret".utf8))
        chmod(path, 0o400)
        #expect(try PrivateFile.read(path) == Array("secret".utf8))
    }

    @Test("a directory is not a regular file; a file larger than the bound is refused")
    func hostileFiles() throws {
        let scratch = try Scratch()
        let folder = scratch.file("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o700)
        #expect(throws: PrivateFile.Failure.notRegular) { try PrivateFile.read(folder) }
        let large = try scratch.write("large", String(repeating: "x", count: 10_000), mode: 0o600)
        #expect(throws: PrivateFile.Failure.io("\(large) is larger than 4096 bytes")) {
            try PrivateFile.read(large, maxBytes: 4096)
        }
    }

    @Test("a symbolic link is followed to its target, whose mode decides")
    func symbolicLink() throws {
        let scratch = try Scratch()
        let target = try scratch.write("target", "secret", mode: 0o600)
        let link = scratch.file("link")
        #expect(symlink(target, link) == 0)
        #expect(try PrivateFile.read(link) == Array("secret".utf8))
        chmod(target, 0o644)
        #expect(throws: PrivateFile.Failure.unsafe(mode: 0o644)) { try PrivateFile.read(link) }
    }

    @Test("create writes mode 0600 whatever the umask, exclusively: an existing file is left as it is")
    func create() throws {
        let scratch = try Scratch()
        let path = scratch.file("new.key")
        let previous = umask(0)
        defer { umask(previous) }
        try PrivateFile.create(path, bytes: [1, 2, 3])
        #expect(Scratch.mode(path) == 0o600)
        #expect(try PrivateFile.read(path) == [1, 2, 3])
        #expect(throws: PrivateFile.Failure.exists) { try PrivateFile.create(path, bytes: [9]) }
        #expect(try PrivateFile.read(path) == [1, 2, 3])
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["new.key"])
        #expect(throws: PrivateFile.Failure.self) { try PrivateFile.create(scratch.file("no/such/dir"), bytes: []) }
    }

    @Test("createEmpty makes a 0600 empty file, leaves an existing one alone, creates nothing through a link")
    func createEmpty() throws {
        let scratch = try Scratch()
        let path = scratch.file("db.sqlite")
        let previous = umask(0)
        defer { umask(previous) }
        try PrivateFile.createEmpty(path)
        #expect(Scratch.mode(path) == 0o600)
        let existing = try scratch.write("existing", "data", mode: 0o644)
        try PrivateFile.createEmpty(existing)
        #expect(Scratch.mode(existing) == 0o644)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "data")
        let link = scratch.file("link.sqlite")
        #expect(symlink(scratch.file("elsewhere"), link) == 0)
        // O_EXCL with O_NOFOLLOW: the link exists, so nothing is created at its target.
        try PrivateFile.createEmpty(link)
        #expect(Scratch.mode(scratch.file("elsewhere")) == nil)
        let missing = scratch.file("no/such/dir/db")
        #expect(throws: PrivateFile.Failure.io("cannot create \(missing): No such file or directory")) {
            try PrivateFile.createEmpty(missing)
        }
    }

    @Test("the unsafe advice names the mode and the chmod that fixes it")
    func advice() {
        #expect(
            PrivateFile.unsafeAdvice("/k", mode: 0o644)
                == "is accessible by group or others (mode 644); it must be private: run `chmod 600 /k`"
        )
        #expect("\(PrivateFile.Failure.unsafe(mode: 0o640))" == "accessible by group or others (mode 640)")
        #expect("\(PrivateFile.Failure.io("cannot open /k: denied"))" == "cannot open /k: denied")
    }
}
