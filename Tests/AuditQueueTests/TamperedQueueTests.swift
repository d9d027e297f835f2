import AuditChain
@testable import AuditQueue
import Foundation
import Synchronization
import Testing

/// Accounted removals on a queue altered behind the log's back. The delivery rows are unsigned copies: whoever can
/// write the file can mark rows as removed or change their hashes. The device must not then sign that entries it no
/// longer holds left by policy (that would turn a deletion, which `verify` reports as missing, into an accounted
/// removal), nor state a hash its chain does not hold.
extension TamperedHeadTests {
    /// The log's findings with its own keys, as `"seq-lastSeq:kind"`.
    func findings(_ log: AuditLog) throws -> [String] {
        let options = ChainVerifier.Options(trustedKeys: try keys.allSigningKeys().map(\.publicKey))
        return try log.storage.verify(options: options).problems.map { "\($0.seq)-\($0.lastSeq):\($0.kind)" }
    }

    @Test("a purge does not turn entries deleted behind the log's back into an accounted removal")
    func purgeOfDeletedEntries() async throws {
        _ = try await makeLog()
        let log = try await tamper(
            "DELETE FROM entries WHERE seq IN (2, 3); UPDATE delivery SET state = 1, reason = 'rejected' WHERE seq IN (2, 3)"
        )
        #expect(try findings(log) == ["2-3:missing"])
        let error = await #expect(throws: LogStoreError.self) {
            _ = try await log.purgeDeadLetters(nil, detail: "cleanup")
        }
        #expect(error?.code == .corruptState)
        #expect(
            error?.message == "cannot seal the removal of entries 2–3 (purged): the log holds 0 of the 2 entries of "
                + "that range. Entries that leave delivery stay in the log, so the others were deleted behind its "
                + "back, and the device does not sign that they left by policy. `auditctl verify` reports them missing"
        )
        #expect(try log.deadLetters().map(\.seq) == [2, 3])
        #expect(try log.info().head.seq == 6)
        #expect(try findings(log) == ["2-3:missing"])
    }

    @Test("an accounted removal states the hash of its last entry as the log holds it, not the queue row's copy")
    func removalHashFromTheLog() async throws {
        _ = try await makeLog()
        let log = try await tamper(
            "UPDATE delivery SET state = 1, reason = 'rejected', hash = zeroblob(32) WHERE seq IN (2, 3)"
        )
        let (purged, records) = try await log.purgeDeadLetters(nil, detail: "cleanup")
        #expect(purged == [2, 3])
        let record = try #require(records.first)
        #expect(records.count == 1)
        guard case .accountedRemoval(let removal) = try SystemRecord(kind: record.header.kind, payload: record.payload)
        else {
            Issue.record("not an accounted removal: \(record.header.kind)")
            return
        }
        let stored = try #require(try log.storage.entries(from: 3, through: 3, limit: 1).first)
        #expect(removal.firstSeq == 2 && removal.lastSeq == 3 && removal.count == 2)
        #expect(removal.lastRemovedHash == (try SealedEntry(serialized: stored.bytes)).entryHash)
        #expect(try findings(log) == [])
    }

    @Test("delivery goes on past a removal of deleted entries; their rows wait, and the refusal is logged once")
    func syncPastARefusedRemoval() async throws {
        _ = try await makeLog()
        let log = try await tamper(
            "DELETE FROM entries WHERE seq = 2; UPDATE delivery SET state = 2, reason = 'fifo' WHERE seq = 2"
        )
        let events = Mutex<[SyncEngine.Event]>([])
        let transport = ScriptedTransport()
        let engine = try SyncEngine(log: log, transport: transport) { event in events.withLock { $0.append(event) } }
        let first = try await engine.cycle()
        #expect(first.recordsRefused == 1 && first.recordsSealed == 0, "\(first)")
        #expect(transport.delivered.keys.sorted() == [0, 1, 3, 4, 5, 6])
        let second = try await engine.cycle()
        #expect(second.recordsRefused == 1 && second.recordsSealed == 0, "\(second)")

        #expect(try log.storage.deliveryTable().items.values.map { "\($0.seq):\($0.state)" } == ["2:removed"])
        let refusals = events.withLock { $0 }.filter { $0.message == "an accounted removal was refused" }
        #expect(refusals.map(\.level) == ["error"])
        #expect(refusals.first?.fields["error"]?.hasPrefix("cannot seal the removal of entries 2–2 (fifo)") == true)
        #expect(try log.info().head.seq == 6)
        #expect(try findings(log) == ["2-2:missing"])
    }
}
