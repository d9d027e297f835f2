import AuditChain
import AuditStore
import Foundation
import Testing
import TestKit

/// `auditctl queue status` and `auditctl dlq list | replay | purge` against the built binary.
@Suite("auditctl queue and dlq")
struct QueueCommandTests {
    let directory: TemporaryDirectory
    let state: String

    init() async throws {
        directory = try TemporaryDirectory()
        state = directory.path + "/state"
        let initialized = try await CLIHarness.auditctl(state, ["init", "--device-id", "phone-1"])
        #expect(initialized.status == 0, "\(initialized.stderr)")
        for user in ["alice", "bob", "carol"] {
            let emitted = try await CLIHarness.auditctl(
                state,
                ["emit", "--type", "BIOMETRIC_REVOKED_SYSTEM_CHANGE", "--user", user, "--device", "phone-1"]
            )
            #expect(emitted.status == 0, "\(emitted.stderr)")
        }
    }

    /// Puts seqs 1 and 2 in the DLQ as a rejecting backend would.
    func deadLetter() async throws {
        let log = try CLIHarness.openLog(state)
        try await log.deliveryTransaction { table, _ in
            for seq: UInt64 in [1, 2] {
                table.items[seq]?.state = .dlq
                table.items[seq]?.reason = "rejected"
                table.items[seq]?.detail = "HTTP 422: bad signature"
            }
        }
    }

    @Test("queue status: pending, dlq, dropped, health, lastSuccess, as text and JSON")
    func status() async throws {
        try await deadLetter()
        let text = try await CLIHarness.auditctl(state, ["queue", "status"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("pending: 2") && text.stdout.contains("dlq: 2"))
        let json = try await CLIHarness.auditctl(state, ["queue", "status", "--json"])
        let members = try #require(try JSONValue(parsing: Array(json.stdout.utf8)).objectValue)
        #expect(members["pending"] == .integer(2) && members["dlq"] == .integer(2))
        #expect(members["dropped"] == .object([:]) && members["health"] == .string("unknown"))
        #expect(members["lastSuccess"] == .null)
    }

    @Test("queue forget-collector: refused without --confirm; with it the trust is dropped and kept as evidence")
    func forgetCollector() async throws {
        let log = try CLIHarness.openLog(state)
        let receipt = #"{"v":2,"seq":1}"#
        try await log.deliveryTransaction(scope: .rows([])) { _, sealer in
            sealer.metadata[CollectorTrust.Meta.receipt] = receipt
            sealer.metadata[CollectorTrust.Meta.collectorKey] = String(repeating: "ab", count: 32)
            sealer.metadata[CollectorTrust.Meta.rejectedReceipt] = #"{"reason":"shrank"}"#
        }
        let refused = try await CLIHarness.auditctl(state, ["queue", "forget-collector"])
        #expect(refused.status != 0 && refused.stderr.contains("--confirm"))
        #expect(try CLIHarness.openLog(state).storage.snapshot().metadata[CollectorTrust.Meta.receipt] == receipt)

        let forgot = try await CLIHarness.auditctl(state, ["queue", "forget-collector", "--confirm"])
        #expect(forgot.status == 0, "\(forgot.stderr)")
        let metadata = try CLIHarness.openLog(state).storage.snapshot().metadata
        #expect(metadata[CollectorTrust.Meta.receipt] == "")
        #expect(metadata[CollectorTrust.Meta.collectorKey] == "")
        #expect(metadata[CollectorTrust.Meta.rejectedReceipt] == "")
        let kept = try #require(
            try metadata[CollectorTrust.Meta.forgottenReceipt].map { try JSONValue(parsing: Array($0.utf8)) }?
                .objectValue
        )
        #expect(kept["receipt"] == .object(["v": .integer(2), "seq": .integer(1)]))
        #expect(kept["rejectedReceipt"]?.objectValue?["reason"] == .string("shrank"))
        #expect(kept["collectorKey"] == .string(String(repeating: "ab", count: 32)))
        let status = try await CLIHarness.auditctl(state, ["queue", "status", "--json"])
        #expect(try JSONValue(parsing: Array(status.stdout.utf8)).objectValue?["receiptSeq"] == .null)
    }

    @Test("dlq list, replay and purge; purge seals an accounted-removal record and counts as dropped")
    func dlqLifecycle() async throws {
        try await deadLetter()
        let list = try await CLIHarness.auditctl(state, ["dlq", "list", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        guard case .array(let items) = try JSONValue(parsing: Array(list.stdout.utf8)) else {
            Issue.record("dlq list --json is not an array")
            return
        }
        #expect(items.compactMap { $0.objectValue?["seq"] } == [.integer(1), .integer(2)])
        #expect(list.stdout.contains("bad signature"))

        let replay = try await CLIHarness.auditctl(state, ["dlq", "replay", "--seq", "1"])
        #expect(replay.status == 0 && replay.stdout.contains("moved 1"), "\(replay.stderr)")

        let purge = try await CLIHarness.auditctl(state, ["dlq", "purge", "--all", "--reason", "operator: known bad"])
        #expect(purge.status == 0 && purge.stdout.contains("purged 1"), "\(purge.stderr)")
        let status = try DeliveryStatus.read(try CLIHarness.openLog(state).storage)
        #expect(status.dlq == 0 && status.dropped == ["purged": 1])
        // The record is in the chain, says what left and why, and the log still verifies.
        let report = try await CLIHarness.verify(state)
        #expect(report.isClean, "\(report.problems)")
        let record = try #require(report.accounted.first)
        #expect(record.removal.reason == "purged" && record.removal.firstSeq == 2 && record.removal.count == 1)
        #expect(record.removal.detail == "operator: known bad")
    }

    @Test("dlq commands refuse entries that are not in the DLQ, and a missing selection, with exit 2")
    func dlqErrors() async throws {
        try await deadLetter()
        let notThere = try await CLIHarness.auditctl(state, ["dlq", "purge", "--seq", "3", "--reason", "x"])
        #expect(notThere.status == 2 && notThere.stderr.contains("not in the DLQ: seq 3"))
        #expect(try await CLIHarness.auditctl(state, ["dlq", "replay"]).status == 2)
        #expect(try await CLIHarness.auditctl(state, ["dlq", "purge", "--all"]).status == 2)
        #expect(try DeliveryStatus.read(try CLIHarness.openLog(state).storage).dlq == 2)
    }
}
