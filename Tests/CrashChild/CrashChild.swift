import AuditChain
import AuditStore
import Foundation

/// Test helper: appends events to a log as fast as it can, printing `ack <seq> <idempotencyKey>` after each
/// commit returns. The crash and concurrency tests kill it or run two of it at once.
///
/// Usage: `CrashChild STATE_DIR LABEL COUNT WRITERS` (COUNT 0 = until killed). With `CRASH_CHILD_EPOCHS=1` in its
/// environment, one more task ends the epoch over and over (`rotateKeys`: in format version 2 an early epoch end, with
/// the erasure of the outgoing key), so that kills land around epoch ends too. With `CRASH_CHILD_ERASE=1` (a log with
/// subject keys) it gives subject after subject three events and erases them, printing `erased <user> <seq>`, so
/// that kills land inside erasures (docs/FORMAT.md, section 13.9).
@main
enum CrashChild {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, let count = Int(arguments[3]), let writers = Int(arguments[4]) else {
            FileHandle.standardError.write(Data("usage: CrashChild STATE_DIR LABEL COUNT WRITERS\n".utf8))
            exit(2)
        }
        let state = StateDirectory(path: arguments[1])
        let label = arguments[2]
        let log = try AuditLog(storage: SQLiteLogStorage(path: state.databasePath), keys: KeyStore(state: state))
        let epochs = ProcessInfo.processInfo.environment["CRASH_CHILD_EPOCHS"] == "1"
        if ProcessInfo.processInfo.environment["CRASH_CHILD_ERASE"] == "1" {
            try await eraseOverAndOver(log, label: label)
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            if epochs {
                group.addTask {
                    while true {
                        _ = try await log.rotateKeys(reason: "crash test")
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
            }
            for writer in 0..<writers {
                group.addTask {
                    var index = 0
                    while count == 0 || index < count {
                        let key = "\(label)-\(writer)-\(index)"
                        let event = AuditEvent(
                            type: "BIOMETRIC_AUTH_SUCCESS",
                            occurredAt: .now(),
                            userId: label,
                            deviceId: "crash-test",
                            attributes: ["unlockDurationMs": .integer(Int64(index))],
                            idempotencyKey: key
                        )
                        let receipt = try await log.append([event])[0]
                        FileHandle.standardOutput.write(Data("ack \(receipt.seq) \(key)\n".utf8))
                        index += 1
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Subjects `LABEL-u0`, `LABEL-u1`, ...: three events each (acknowledged), then their erasure.
    static func eraseOverAndOver(_ log: AuditLog, label: String) async throws {
        var subject = 0
        while true {
            let user = "\(label)-u\(subject)"
            let events = (0..<3).map { index in
                AuditEvent(
                    type: "BIOMETRIC_AUTH_SUCCESS",
                    occurredAt: .now(),
                    userId: user,
                    deviceId: "crash-test",
                    attributes: ["unlockDurationMs": .integer(Int64(index))],
                    idempotencyKey: "\(user)-\(index)"
                )
            }
            for (receipt, event) in zip(try await log.append(events), events) {
                FileHandle.standardOutput.write(Data("ack \(receipt.seq) \(event.idempotencyKey)\n".utf8))
            }
            let erasure = try await log.erase(userId: user, reason: "crash test", requestedBy: "")
            FileHandle.standardOutput.write(Data("erased \(user) \(erasure.recordSeq)\n".utf8))
            subject += 1
        }
    }
}
