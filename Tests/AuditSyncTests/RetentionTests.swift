import AuditChain
@testable import AuditStore
import Foundation
import Testing
import AuditWire
import AuditSync
import TestKit

@Suite("Retention")
struct RetentionTests {
    @Test("delivered entries older than the retention are pruned with a cumulative record; the log still verifies")
    func prunesDelivered() async throws {
        var policy = DeliveryPolicy()
        policy.retention = .seconds(3600)
        let fixture = try await DeliveryFixture(policy: policy)
        try await fixture.append(5)
        try await fixture.engine.cycle()
        fixture.clocks.advance(.seconds(2 * 3600))
        let young = try await fixture.append(1)
        let report = try await fixture.engine.cycle()
        #expect(report.pruned == 5)
        let seqs = try fixture.log.storage.entries(from: 0, through: .max, limit: 100).map(\.seq)
        #expect(seqs.first == 0 && !seqs.contains(1) && !seqs.contains(5) && seqs.contains(young[0]))
        let verification = try LogFixture.verify(fixture.log)
        #expect(verification.isClean, "\(verification.problems)")
        #expect(verification.accounted.contains { $0.removal.reason == "retention" && $0.removal.lastSeq == 5 })
        // A second pass later is cumulative: the new record covers 1 ... its last seq, including the old record.
        fixture.clocks.advance(.seconds(2 * 3600))
        try await fixture.append(1)
        let second = try await fixture.engine.cycle()
        let through = try #require(second.pruned)
        #expect(through > 5)
        let again = try LogFixture.verify(fixture.log)
        #expect(again.isClean, "\(again.problems)")
    }

    @Test("the newest event stays when a checkpoint follows it: appends walk back to it to check the active keys")
    func keepsTheKeySource() async throws {
        var policy = DeliveryPolicy()
        policy.retention = .seconds(3600)
        let fixture = try await DeliveryFixture(policy: policy, sqlite: true)
        try await fixture.append(3)
        try await fixture.engine.cycle()
        #expect(try await fixture.log.writeCheckpoint().seq == 4)
        fixture.clocks.advance(.seconds(2 * 3600))
        let report = try await fixture.engine.cycle()  // delivers the checkpoint, then prunes
        #expect(report.pruned == 2, "\(report)")
        let seqs = try fixture.log.storage.entries(from: 0, through: .max, limit: 100).map(\.seq)
        #expect(seqs == [0, 3, 4, 5])
        #expect(try await fixture.append(1) == [6])
        let verification = try LogFixture.verify(fixture.log)
        #expect(verification.isClean, "\(verification.problems)")
    }

    @Test("an undelivered entry is never pruned, and the storage refuses to prune one")
    func keepsUndelivered() async throws {
        var policy = DeliveryPolicy()
        policy.retention = .seconds(3600)
        let fixture = try await DeliveryFixture(policy: policy)
        try await fixture.append(3)
        fixture.transport.set(.perEntry { seq in seq == 2 ? .init(seq: seq, status: .rejected, code: 503) : nil })
        try await fixture.engine.cycle()
        fixture.clocks.advance(.seconds(2 * 3600))
        try await fixture.append(1)
        let report = try await fixture.engine.cycle()
        #expect(report.pruned == 1)
        let seqs = try fixture.log.storage.entries(from: 0, through: .max, limit: 100).map(\.seq)
        #expect(seqs.contains(2) && seqs.contains(3) && !seqs.contains(1))
        await #expect(throws: LogStoreError.self) {
            _ = try await fixture.log.storage.prune(through: 2, keep: [0]) { _ in LogAppend(entries: []) }
        }
    }
}
