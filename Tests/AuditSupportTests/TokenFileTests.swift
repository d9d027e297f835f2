import AuditSupport
import Foundation
import Testing

@Suite struct TokenFileTests {
    @Test("the token is the file's one line without surrounding white space")
    func token() throws {
        let scratch = try Scratch()
        #expect(try TokenFile.read(try scratch.write("t", "  s3cret \n", mode: 0o600)) == "s3cret")
        #expect(try TokenFile.read(try scratch.write("u", "s3cret", mode: 0o400)) == "s3cret")
    }

    @Test("an empty file, two lines, a shared file and a missing one are refused, and the token is never shown")
    func refused() throws {
        let scratch = try Scratch()
        for (name, text) in [("empty", " \n"), ("two", "s3cret\nother\n")] {
            let path = try scratch.write(name, text, mode: 0o600)
            #expect(throws: SecretFile.Failure(.invalid, "token file \(path) must hold one non-empty line")) {
                try TokenFile.read(path)
            }
        }
        let shared = try scratch.write("shared", "s3cret\n", mode: 0o644)
        let unsafe = #expect(throws: SecretFile.Failure.self) { try TokenFile.read(shared) }
        #expect(unsafe?.kind == .unsafe)
        #expect(unsafe?.description.contains("chmod 600") == true)
        #expect(unsafe?.description.contains("s3cret") == false)
        let absent = scratch.file("absent")
        #expect(throws: SecretFile.Failure(.missing, "cannot open token file \(absent): no such file")) {
            try TokenFile.read(absent)
        }
    }
}
