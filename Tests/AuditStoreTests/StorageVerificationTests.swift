import AuditChain
import AuditStore
import Foundation
import GRDB
import Testing
import TestKit

/// `LogStorage.verify`: the SQLite log's lookup columns (`hash`, `kind`, `time`) are checked against the entries.
@Suite("Storage verification")
struct StorageVerificationTests {
    let directory: TemporaryDirectory
    let log: AuditLog

    init() async throws {
        directory = try TemporaryDirectory()
        log = try await LogFixture.log(.sqlite, in: directory)
        _ = try await log.append((1...5).map(LogFixture.event))
    }

    func verify(fast: Bool = false) throws -> VerificationReport {
        var options = ChainVerifier.Options(trustedKeys: [try log.activeSigningKey().publicKey])
        options.fast = fast
        return try log.storage.verify(options: options)
    }

    func edit(_ sql: String) throws {
        let queue = try DatabaseQueue(path: directory.path + "/log.sqlite")
        try queue.writeWithoutTransaction { try $0.execute(sql: sql) }
    }

    @Test("an untouched log verifies clean, with every entry read through its lookup columns")
    func untouched() throws {
        let report = try verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.entriesChecked == 6)
        #expect(try verify(fast: true).isClean)
    }

    @Test(
        "a lookup column changed with SQL is reported at its seq as lookupMismatch, the entry itself stays intact",
        arguments: [
            ("hash", "UPDATE entries SET hash = zeroblob(32) WHERE seq = 3", "hash 0000"),
            ("kind", "UPDATE entries SET kind = 4 WHERE seq = 3", "kind 4, but the entry is a event (1)"),
            ("time", "UPDATE entries SET time = time + 1 WHERE seq = 3", "time "),
            ("kind as text", "UPDATE entries SET kind = 'x' WHERE seq = 3", "kind not an integer"),
        ]
    )
    func changedColumn(column: String, sql: String, detail: String) throws {
        try edit(sql)
        for fast in [false, true] {
            let report = try verify(fast: fast)
            #expect(report.problems.map { "\($0.seq):\($0.kind)" } == ["3:lookupMismatch"], "\(column)")
            #expect(report.problems.first?.detail.contains(detail) == true, "\(report.problems)")
            #expect(report.entriesChecked == 6)
        }
    }

    @Test("every changed row is reported, each with its own seq")
    func severalRows() throws {
        try edit("UPDATE entries SET time = 0 WHERE seq IN (1, 4); UPDATE entries SET kind = 0 WHERE seq = 5")
        let report = try verify()
        #expect(
            report.problems.map { "\($0.seq):\($0.kind)" } == [
                "1:lookupMismatch", "4:lookupMismatch", "5:lookupMismatch",
            ]
        )
    }

    @Test("a storage without lookup columns is verified as before")
    func memoryStorage() async throws {
        let other = try TemporaryDirectory()
        let memory = try await LogFixture.log(.memory, in: other)
        _ = try await memory.append([LogFixture.event(1)])
        let report = try memory.storage.verify(
            options: ChainVerifier.Options(trustedKeys: [try memory.activeSigningKey().publicKey])
        )
        #expect(report.isClean && report.entriesChecked == 2)
    }
}
