import AuditChain
@testable import AuditStore
import Testing
import TestKit

@Suite("SecureRandom")
struct SecureRandomTests {
    @Test("returns exactly the bytes asked for, across the 256-byte pieces, and never the same twice")
    func counts() {
        #expect(SecureRandom.bytes(0).isEmpty)
        for count in [1, 12, 255, 256, 257, 12_000] {
            let first = SecureRandom.bytes(count)
            let second = SecureRandom.bytes(count)
            #expect(first.count == count)
            #expect(second.count == count)
            if count >= 12 { #expect(first != second) }
        }
        // Every 256-byte piece is filled: no piece of a long draw is left as zeros.
        let long = SecureRandom.bytes(4096)
        for start in stride(from: 0, to: 4096, by: 256) {
            #expect(long[start..<start + 256].contains { $0 != 0 })
        }
    }

    @Test("the log's default generator gives every event of a commit its own nonce")
    func noncesDiffer() {
        let bytes = AuditLog.Configuration().randomBytes(12 * 1000)
        let nonces = Set(stride(from: 0, to: bytes.count, by: 12).map { Array(bytes[$0..<$0 + 12]) })
        #expect(nonces.count == 1000)
    }

    @Test("a generator that gives fewer bytes than asked stops the append, and nothing is written")
    func shortGenerator() async throws {
        let directory = try TemporaryDirectory()
        let storage = MemoryLogStorage()
        let keys = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
        _ = try await AuditLog.create(storage: storage, keys: keys, deviceId: "device")
        var configuration = AuditLog.Configuration()
        configuration.randomBytes = { Array(SecureRandom.bytes($0).dropLast()) }
        let log = try AuditLog(storage: storage, keys: keys, configuration: configuration)
        let error = await #expect(throws: LogStoreError.self) {
            try await log.append([LogFixture.event(1), LogFixture.event(2)])
        }
        #expect(error?.code == .storage)
        #expect(try storage.size().count == 1)
    }
}
