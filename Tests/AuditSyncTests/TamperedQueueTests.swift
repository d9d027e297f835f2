import AuditChain
@testable import AuditStore
@testable import AuditSync
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

    @Test(
        "an accounted removal states the hash the chain links past its range with, not the row's or an altered entry's"
    )
    func removalHashFromTheChain() async throws {
        _ = try await makeLog()
        // Rows 2, 3 and 6 dead-lettered with zeroed hashes; entry 3's stored payload digest altered since.
        let log = try await tamper(
            "UPDATE delivery SET state = 1, reason = 'rejected', hash = zeroblob(32) WHERE seq IN (2, 3, 6); "
                + Self.alterDigest(seq: 3)
        )
        let stored = try log.storage.entries(from: 0, through: 6, limit: 7).map {
            try SealedEntry(serialized: $0.bytes)
        }
        let (purged, records) = try await log.purgeDeadLetters(nil, detail: "cleanup")
        #expect(purged == [2, 3, 6])
        let removals = try records.map { record -> SystemRecord.Removal? in
            guard
                case .accountedRemoval(let removal) = try SystemRecord(
                    kind: record.header.kind,
                    payload: record.payload
                )
            else { return nil }
            return removal
        }
        #expect(removals.map { "\($0?.firstSeq ?? 0)-\($0?.lastSeq ?? 0)" } == ["2-3", "6-6"])
        // Run 2–3: what entry 4 links to, the hash entry 3 was sealed with; its altered bytes hash to another.
        #expect(removals.first??.lastRemovedHash == stored[4].header.prevHash)
        #expect(stored[3].entryHash != stored[4].header.prevHash)
        // Run 6–6 ends at the head: the head's hash, which the first record links to.
        #expect(removals.last??.lastRemovedHash == stored[6].entryHash)
        #expect(records.first?.header.prevHash == stored[6].entryHash)
        // The `hash` column still holds the hash entry 3 was sealed with, which its altered bytes no longer give.
        #expect(try findings(log) == ["3-3:headerModified", "3-3:lookupMismatch"])
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
