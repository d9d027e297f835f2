import AuditChain
import AuditCollector
@testable import AuditStore
@testable import AuditSync
import AuditWire
import AuditWitness
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// An agent that requires a witness's cosignature (docs/WITNESS.md), against a real collector and a
/// real witness on loopback.
@Suite("Delivery with a witness")
struct WitnessedDeliveryTests {
    /// The witness's key on the checkpoint the agent keeps.
    static func keptCosignatures(_ fixture: SyncFixture) throws -> [UInt64] {
        let kept = try #require(CollectorTrust(metadata: try fixture.log.storage.snapshot().metadata).treeReceipt)
        let note = try SignedNote(parsing: Array(kept.checkpoint.utf8))
        let key = try CosignatureVerifierKey(parsing: try #require(fixture.witnessVKey))
        return try key.verify(note)
    }

    @Test func cosignedReceiptsAreAppliedAndKeptWithTheCosignature() async throws {
        try await SyncFixture.run(witnessed: true) { fixture in
            try await fixture.append(3)
            let report = try await fixture.engine.cycle()
            #expect(report.delivered == 4 && report.health == .healthy, "\(report.failure ?? "")")
            #expect(try Self.keptCosignatures(fixture).count == 1)
            try await fixture.append(2)
            let next = try await fixture.engine.cycle()
            #expect(next.delivered == 2 && next.health == .healthy, "\(next.failure ?? "")")
            #expect(try Self.keptCosignatures(fixture).count == 1)
            try await fixture.expectExactlyOnce()
        }
    }

    @Test func withTheWitnessDownNothingIsAppliedOrDroppedUntilItIsBack() async throws {
        try await SyncFixture.run(witnessed: true) { fixture in
            try await fixture.append(2)
            #expect(try await fixture.engine.cycle().delivered == 3)
            let witness = try #require(fixture.witness)
            await witness.stop()
            try await fixture.append(2)
            let report = try await fixture.engine.cycle()
            #expect(report.delivered == 0)
            #expect(report.failure?.contains("witness") == true, "\(report.failure ?? "")")
            #expect(try fixture.table.count(.pending) == 2)
            #expect(try fixture.table.count(.dlq) == 0)
            #expect(await fixture.pause > .zero)
            // Nothing was refused as a lie: no evidence kept, the last verified receipt unchanged.
            let metadata = try fixture.log.storage.snapshot().metadata
            #expect(metadata[CollectorTrust.Meta.rejectedReceipt] == nil)
            #expect(CollectorTrust(metadata: metadata).treeReceipt?.leafIndex == 2)
            try await witness.start()
            for _ in 0..<10 where try !fixture.table.items.isEmpty {
                fixture.clocks.advance(max(await fixture.pause, .zero) + .milliseconds(1))
                try await fixture.engine.cycle()
            }
            #expect(try fixture.table.items.isEmpty)
            #expect(try Self.keptCosignatures(fixture).count == 1)
            try await fixture.expectExactlyOnce()
        }
    }

    @Test func aForgedCosignatureIsRefused() async throws {
        try await SyncFixture.run(witnessed: true) { fixture in
            try await fixture.append(1)
            #expect(try await fixture.engine.cycle().delivered == 2)
            // The collector's next checkpoint, with a cosignature line of the witness's name and key ID whose
            // signature is wrong.
            let vkey = try CosignatureVerifierKey(parsing: try #require(fixture.witnessVKey))
            let receipt = try #require(
                try await fixture.collector.treeReceipt(logId: fixture.log.info().logId, from: 2)
            )
            let note = try SignedNote(parsing: Array(receipt.checkpoint.utf8))
            let forged = try SignedNote(
                text: note.text,
                signatures: note.signatures.filter { !vkey.matches($0) }
                    + [
                        try SignedNote.Signature(
                            keyName: vkey.name,
                            keyID: vkey.keyID,
                            signature: [UInt8](repeating: 1, count: 72)
                        )
                    ]
            )
            var tampered = receipt
            tampered.checkpoint = String(decoding: forged.bytes, as: UTF8.self)
            guard case .rejected(let reason) = try await fixture.engine.check(tampered) else {
                Issue.record("a forged cosignature was not refused")
                return
            }
            #expect(reason.contains("does not verify"))
            // Without the line at all, the quorum is not met: an outage, not a lie.
            var bare = receipt
            bare.checkpoint = String(
                decoding: try SignedNote(text: note.text, signatures: note.signatures.filter { !vkey.matches($0) })
                    .bytes,
                as: UTF8.self
            )
            guard case .unverifiable = try await fixture.engine.check(bare) else {
                Issue.record("a checkpoint without the witness's cosignature was applied")
                return
            }
            guard case .verified = try await fixture.engine.check(receipt) else {
                Issue.record("the witnessed receipt does not verify")
                return
            }
        }
    }

    @Test func aRewrittenTreeIsNotCosignedAndTheAgentRefusesIt() async throws {
        try await SyncFixture.run(witnessed: true) { fixture in
            try await fixture.append(3)
            #expect(try await fixture.engine.cycle().delivered == 4)
            let queue = try DatabaseQueue(path: fixture.database)
            try await queue.write { db in
                let hashes = try #require(try Data.fetchOne(db, sql: "SELECT hashes FROM tree_tiles WHERE level = 0"))
                var bytes = Array(hashes)
                bytes[0] ^= 0xFF
                try db.execute(sql: "UPDATE tree_tiles SET hashes = ? WHERE level = 0", arguments: [Data(bytes)])
            }
            try queue.close()
            try await fixture.append(2)
            let report = try await fixture.engine.cycle()
            #expect(report.delivered == 0 && report.health == .failing)
            let metadata = try fixture.log.storage.snapshot().metadata
            let evidence = try #require(
                try metadata[CollectorTrust.Meta.rejectedReceipt].map { try JSONValue(parsing: Array($0.utf8)) }?
                    .objectValue
            )
            let refused = try #require(evidence["receipt"].flatMap { try? TreeReceipt(json: $0) })
            let note = try SignedNote(parsing: Array(refused.checkpoint.utf8))
            // The witness refused to cosign the rewritten tree.
            let vkey = try CosignatureVerifierKey(parsing: try #require(fixture.witnessVKey))
            #expect(try vkey.verify(note).isEmpty)
            #expect(note.signatures.count == 1)
        }
    }
}

extension SyncFixture {
    /// The witness's vkey (its key file, read as the witness reads it).
    var witnessVKey: String? {
        guard let witness,
            let key = try? WitnessKeyFile.load(path: witness.configuration.keyPath),
            let signer = try? CosignatureSigner(name: witness.configuration.name, privateKey: key)
        else { return nil }
        return signer.verifierKey.vkey
    }
}
