import AuditChain
import AuditStore
import Foundation
import Testing
import TestKit

/// The one way to open a state directory's log (StateDirectory+Log.swift): what the agent, auditctl and the bench
/// call, with the refusals they print.
@Suite("StateDirectory")
struct StateDirectoryTests {
    @Test("no log: opening is refused with the advice to run init; creating twice is refused and changes nothing")
    func openAndCreate() async throws {
        let directory = try TemporaryDirectory()
        let state = StateDirectory(path: directory.path + "/state")
        let missing = #expect(throws: LogStoreError.self) { try state.openLog() }
        #expect(missing?.code == .notInitialized)
        #expect(
            missing?.message == "no audit log in \(state.path): run `auditctl init --state-dir \(state.path)` first"
        )
        #expect(throws: LogStoreError.self) { try state.openStorage() }

        let created = try await state.createLog(deviceId: "device-1")
        let logId = try created.info().logId
        let mode = try FileManager.default.attributesOfItem(atPath: state.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)

        do {
            _ = try await state.createLog(deviceId: "device-2")
            Issue.record("a second createLog succeeded")
        } catch let error as LogStoreError {
            #expect(error.code == .alreadyInitialized)
            #expect(error.message == "\(state.path) already holds an audit log; it is never overwritten")
        }
        #expect(try state.openLog().info().logId == logId)
        let (storage, _) = try state.openStorage()
        #expect(try storage.snapshot().head?.seq == 0)
    }

    @Test("openOrCreateLog creates on an empty directory or a database without entries, and opens afterwards")
    func openOrCreate() async throws {
        let directory = try TemporaryDirectory()
        let state = StateDirectory(path: directory.path + "/state")
        try state.create()
        // A creation that stopped before its genesis was committed: the database exists and is empty.
        _ = try SQLiteLogStorage(path: state.databasePath)
        #expect(state.exists)

        let first = try await state.openOrCreateLog(deviceId: "device-1")
        #expect(first.created)
        let logId = try first.log.info().logId
        let second = try await state.openOrCreateLog(deviceId: "device-2")
        #expect(!second.created)
        #expect(try second.log.info().logId == logId)
    }
}
