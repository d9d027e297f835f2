import AuditChain
import AuditCollector
@testable import AuditStore
@testable import AuditSync
import AuditWire
import Foundation
import GRDB
import Testing
import TestKit
import TransparencyLog

/// A real collector that rewrites the history it signed (docs/TRANSPARENCY.md section 7): the agent's check of
/// each checkpoint against the last one it verified catches it, keeps the evidence, and delivers nothing more on
/// that collector's word, while the log keeps recording.
@Suite("A forked or rewritten collector")
struct ForkedCollectorTests {
    /// Delivers three events (a tree of 4), rewrites the collector's database with `rewrite`, appends two more and
    /// expects the agent to refuse the next answer.
    static func caught(
        _ words: String,
        newSize: UInt64 = 6,
        rewrite: @escaping @Sendable (Database) throws -> Void
    ) async throws {
        try await SyncFixture.run { fixture in
            try await fixture.append(3)
            let first = try await fixture.engine.cycle()
            #expect(first.delivered == 4 && first.health == .healthy)
            let verified = try #require(
                CollectorTrust(metadata: try fixture.log.storage.snapshot().metadata).treeReceipt
            )
            #expect(verified.leafIndex == 3)

            let queue = try DatabaseQueue(path: fixture.database)
            try await queue.write(rewrite)
            try queue.close()

            try await fixture.append(2)
            let report = try await fixture.engine.cycle()
            #expect(report.health == .failing)
            #expect(report.delivered == 0)
            #expect(report.failure?.contains(words) == true, "\(report.failure ?? "no failure")")
            let status = try DeliveryStatus.read(fixture.log.storage)
            #expect(status.health == "failing" && status.receiptSeq == 3 && status.pending == 2)
            let metadata = try fixture.log.storage.snapshot().metadata
            let evidence = try #require(
                try metadata[CollectorTrust.Meta.rejectedReceipt].map { try JSONValue(parsing: Array($0.utf8)) }?
                    .objectValue
            )
            // The evidence: the refused checkpoint with its proofs beside the last verified one, both signed.
            let refused = try #require(evidence["receipt"].flatMap { try? TreeReceipt(json: $0) })
            let previous = try #require(evidence["previous"].flatMap { try? TreeReceipt(json: $0) })
            #expect(previous == verified)
            // The kept checkpoint is what `auditctl queue status --json` shows an investigator.
            #expect(status.checkpoint == verified.checkpoint)
            #expect(status.json.objectValue?["checkpoint"] == .string(verified.checkpoint))
            let origin = fixture.collector.origin(logId: refused.logId)
            let key = try NoteVerifierKey(name: origin, publicKey: fixture.collector.receiptKey.publicKey)
            let new = try Checkpoint(
                signedNote: try SignedNote(parsing: Array(refused.checkpoint.utf8)),
                origin: origin,
                keys: [key]
            )
            let old = try Checkpoint(
                signedNote: try SignedNote(parsing: Array(previous.checkpoint.utf8)),
                origin: origin,
                keys: [key]
            )
            #expect(new.size == newSize && old.size == 4)
            #expect(throws: MerkleProof.Failure.self) {
                try MerkleProof.verifyConsistency(
                    first: old.size,
                    second: new.size,
                    firstRoot: old.rootHash,
                    secondRoot: new.rootHash,
                    proof: refused.consistency?.proof ?? []
                )
            }
            // The log keeps recording; the entries wait for a collector that can prove what it holds.
            try await fixture.append(1)
            #expect(try fixture.log.info().head.seq == 6)
            #expect(try fixture.table.count(.pending) == 3)
        }
    }

    @Test("a collector that rewrites a stored hash of its tree is caught by the consistency check")
    func rewrittenTile() async throws {
        try await Self.caught("does not extend") { db in
            let hashes = try #require(try Data.fetchOne(db, sql: "SELECT hashes FROM tree_tiles WHERE level = 0"))
            var bytes = Array(hashes)
            bytes[32] ^= 0x01  // leaf 1
            try db.execute(sql: "UPDATE tree_tiles SET hashes = ? WHERE level = 0", arguments: [Data(bytes)])
        }
    }

    @Test("a collector that rewrites an entry and rebuilds its tree from it is caught")
    func rewrittenEntry() async throws {
        try await Self.caught("does not extend") { db in
            let bytes = try #require(try Data.fetchOne(db, sql: "SELECT bytes FROM entries WHERE seq = 1"))
            var altered = Array(bytes)
            altered[altered.count - 1] ^= 0x01
            try db.execute(sql: "UPDATE entries SET bytes = ? WHERE seq = 1", arguments: [Data(altered)])
            try db.execute(sql: "DELETE FROM trees; DELETE FROM tree_tiles")
        }
    }

    @Test("a collector that drops entries and regrows its tree to the same size signs a second tree: caught")
    func droppedEntries() async throws {
        try await Self.caught("two different trees", newSize: 4) { db in
            // Forget entries 2 and 3 and the tree: it regrows from 0, 1 and the next batch's 4 and 5.
            try db.execute(sql: "DELETE FROM entries WHERE seq IN (2, 3)")
            try db.execute(sql: "DELETE FROM trees; DELETE FROM tree_tiles")
        }
    }
}
