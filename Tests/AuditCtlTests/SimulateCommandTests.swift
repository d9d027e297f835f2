import AuditChain
import Foundation
import Testing
import AuditStore
import TestKit

/// End-to-end tests of `auditctl simulate` with the built binary.
@Suite("auditctl simulate")
struct SimulateCommandTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A new initialized state directory.
    func initializedState(_ name: String) async throws -> String {
        let state = directory.path + "/" + name
        let result = try await CLIHarness.auditctl(state, ["init", "--device-id", "sim-host"])
        try #require(result.status == 0, "\(result.stderr)")
        return state
    }

    /// `simulate ... --json`, parsed.
    func simulate(_ state: String, _ arguments: [String]) async throws -> [String: JSONValue] {
        let result = try await CLIHarness.auditctl(state, ["simulate"] + arguments + ["--json"])
        try #require(result.status == 0, "\(result.stderr)")
        return try #require(try JSONValue(parsing: Array(result.stdout.utf8)).objectValue)
    }

    /// The log's event entries without the members that differ between two logs of the same events (sealing
    /// time, hashes, key ids, sizes): sequence number, kind and the whole decrypted event.
    func loggedEvents(_ state: String) async throws -> [JSONValue] {
        let result = try await CLIHarness.auditctl(state, ["log", "--decrypt", "--json"])
        try #require(result.status == 0, "\(result.stderr)")
        guard case .array(let rows) = try JSONValue(parsing: Array(result.stdout.utf8)) else {
            Issue.record("log --json is not an array")
            return []
        }
        return rows.compactMap { row -> JSONValue? in
            guard let members = row.objectValue, members["kind"]?.stringValue == "event" else { return nil }
            #expect(members["event"] != nil, "entry \(members["seq"] ?? .null) was not decrypted")
            return .object([
                "seq": members["seq"] ?? .null, "kind": .string("event"), "event": members["event"] ?? .null,
            ])
        }
    }

    @Test("the same seed in two logs: equal counts and the same events, in order; both verify")
    func sameSeedSameEvents() async throws {
        let first = try await initializedState("a")
        let second = try await initializedState("b")
        let arguments = ["--users", "2", "--sessions", "10", "--seed", "7"]
        let firstReport = try await simulate(first, arguments)
        let secondReport = try await simulate(second, arguments)
        #expect(firstReport == secondReport)
        #expect(firstReport["seed"] == .integer(7))
        #expect(firstReport["users"] == .integer(2))
        #expect(firstReport["sessions"] == .integer(10))
        let counts = try #require(firstReport["events"]?.objectValue)
        #expect(!counts.isEmpty)
        #expect(counts.values.allSatisfy { ($0.integerValue ?? 0) > 0 })
        let total = counts.values.compactMap(\.integerValue).reduce(0, +)
        #expect(total > 0)
        #expect(firstReport["total"] == .integer(total))

        let firstEvents = try await loggedEvents(first)
        let secondEvents = try await loggedEvents(second)
        #expect(firstEvents.count == Int(total))
        #expect(firstEvents == secondEvents)
        var logged: [String: Int64] = [:]
        for row in firstEvents {
            if let type = row.objectValue?["event"]?.objectValue?["type"]?.stringValue { logged[type, default: 0] += 1 }
        }
        #expect(logged == counts.compactMapValues(\.integerValue))

        for state in [first, second] {
            let verified = try await CLIHarness.auditctl(state, ["verify", "--decrypt"])
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        }

        let third = try await initializedState("c")
        _ = try await simulate(third, ["--users", "2", "--sessions", "10", "--seed", "8"])
        let otherEvents = try await loggedEvents(third)
        #expect(!otherEvents.isEmpty)
        #expect(otherEvents != firstEvents)
    }

    @Test("human output: one line per type and a total; events appended in batches of 256, not one by one")
    func humanOutputAndBatches() async throws {
        let state = try await initializedState("h")
        let result = try await CLIHarness.auditctl(
            state,
            ["simulate", "--users", "4", "--sessions", "80", "--seed", "3"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count >= 3, "\(result.stdout)")
        #expect(lines[0].hasPrefix("simulated 320 sessions of 4 users (seed 3): "))
        let rows = lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.allSatisfy { $0.count == 2 && Int($0[1]) != nil }, "\(result.stdout)")
        let total = try #require(rows.last.flatMap { $0.first == "total" ? Int($0[1]) : nil })
        let perType = rows.dropLast()
        #expect(perType.map { $0[0] } == perType.map { $0[0] }.sorted())
        #expect(perType.contains { $0[0] == "PASSWORD_AUTH_FALLBACK" })
        #expect(perType.compactMap { Int($0[1]) }.reduce(0, +) == total)
        try #require(total > 256, "enough events for two batches")

        let log = try CLIHarness.openLog(state)
        var eventEntries = 0
        var sealingTimes: Set<AuditTimestamp> = []
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            if entry.header.kind == .event {
                eventEntries += 1
                sealingTimes.insert(entry.header.time)
            }
            return true
        }
        #expect(eventEntries == total)
        let commits = (total + 255) / 256
        #expect(sealingTimes.count <= commits, "one commit per batch of 256 (each commit seals with one time)")
    }

    @Test("options out of range exit 2 and append nothing")
    func invalidOptions() async throws {
        let state = try await initializedState("v")
        let invalid = [
            ["--users", "0"], ["--users", "10001"], ["--sessions", "0"], ["--sessions", "100001"],
            ["--seed", "9007199254740992"], ["--users", "-1"],
        ]
        for arguments in invalid {
            let result = try await CLIHarness.auditctl(state, ["simulate"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains(arguments[0]), "\(arguments): \(result.stderr)")
        }
        #expect(try await loggedEvents(state).isEmpty)

        let missing = try await CLIHarness.auditctl(directory.path + "/none", ["simulate"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("auditctl init"))
    }
}
