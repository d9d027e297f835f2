import AuditChain
import AuditCollector
@testable import AuditStore
@testable import AuditSync
import Crypto
import Foundation
import Testing
import TestKit

/// Format version 2 logs delivered to the collector (docs/FORMAT.md, section 13.1; docs/PROTOCOL.md): batches end
/// on a signed entry, the collector accepts the entries a signature covers, and its copy verifies with the genesis
/// key alone.
@Suite("Format version 2 delivery")
struct FormatV2DeliveryTests {
    static func settings(signEvery: Int) -> AuditLog.Configuration {
        var settings = AuditLog.Configuration()
        settings.formatVersion = FormatConstants.version2
        settings.epochSeconds = 600
        settings.signEvery = signEvery
        return settings
    }

    /// The collector's copy, verified with only the genesis key pinned.
    static func verifyCopy(
        _ fixture: SyncFixture,
        genesisKey: Curve25519.Signing.PublicKey
    ) async throws
        -> VerificationReport
    {
        let info = try fixture.log.info()
        let held = try await fixture.collector.store.entries(logId: info.logId)
        var verifier = ChainVerifier(options: ChainVerifier.Options(trustedKeys: [genesisKey]))
        for entry in held { verifier.consume(entry.bytes, storageSeq: entry.seq) }
        return verifier.finish()
    }

    @Test("commits longer than a batch: each batch ends on a signed entry, everything is held, the copy verifies")
    func batchesEndOnSignatures() async throws {
        var policy = DeliveryPolicy()
        policy.batchSize = 7
        try await SyncFixture.run(policy: policy, log: Self.settings(signEvery: 5)) { fixture in
            let genesisKey = try fixture.log.activeSigningKey().publicKey
            try await fixture.append(12)
            try await fixture.append(3)
            for _ in 0..<20 where try !fixture.table.items.isEmpty { try await fixture.engine.cycle() }
            #expect(try fixture.table.items.isEmpty)
            let sent = fixture.transport.responses
            #expect(!sent.isEmpty)
            let info = try fixture.log.info()
            let head = try await fixture.collector.store.head(logId: info.logId)
            #expect(head?.seq == info.head.seq && head?.hash == info.head.hash)
            let report = try await Self.verifyCopy(fixture, genesisKey: genesisKey)
            #expect(report.isClean, "\(report.problems)")
            #expect(report.formatVersion == 2)
        }
    }

    @Test("a batch is cut after its last signed entry; the rest waits for the next batch")
    func trimming() {
        func stored(_ seq: UInt64, signed: Bool) -> StoredEntry {
            var bytes = [UInt8](repeating: 0, count: FormatConstants.headerSize)
            bytes[4] = FormatConstants.version2
            bytes[7] = signed ? 1 : 0
            return StoredEntry(seq: seq, bytes: bytes)
        }
        let batch = [stored(1, signed: false), stored(2, signed: true), stored(3, signed: false)]
        #expect(SyncEngine.endingOnSignature(batch).map(\.seq) == [1, 2])
        let unsigned = [stored(1, signed: false), stored(2, signed: false)]
        #expect(SyncEngine.endingOnSignature(unsigned).map(\.seq) == [1, 2])
        let split = [1, 2, 3, 4, 5, 6].map { stored($0, signed: $0 == 2 || $0 == 6) }
        #expect(SyncEngine.splitPoint(split) == 2)
        let v1 = [1, 2, 3, 4].map { StoredEntry(seq: $0, bytes: []) }
        #expect(SyncEngine.splitPoint(v1) == 2)
    }

    @Test("epoch, close and crash recovery records are delivered and pinned; the copy states the log closed")
    func epochRecordsAreDelivered() async throws {
        try await SyncFixture.run(log: Self.settings(signEvery: 256)) { fixture in
            let genesisKey = try fixture.log.activeSigningKey().publicKey
            try await fixture.log.beginRun()
            try await fixture.append(4)
            _ = try await fixture.log.rotateKeys(reason: "test")
            try await fixture.append(2)
            try await fixture.log.endRun()
            for _ in 0..<10 where try !fixture.table.items.isEmpty { try await fixture.engine.cycle() }
            #expect(try fixture.table.items.isEmpty)
            let report = try await Self.verifyCopy(fixture, genesisKey: genesisKey)
            #expect(report.isClean, "\(report.problems)")
            #expect(report.closed && report.epochs == 2)
            #expect(DeliveryPriority.of(kind: .epoch) == .pinned && DeliveryPriority.of(kind: .close) == .pinned)
        }
    }
}
