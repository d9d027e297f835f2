import AuditChain
@testable import AuditStore
import Foundation
import Synchronization
import Testing
import TestKit

@Suite("AuditLog")
struct AuditLogTests {
    @Test("concurrent appends share commits and produce one valid chain with every event")
    func concurrentAppends() async throws {
        let directory = try TemporaryDirectory()
        let log = try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil),
            deviceId: "device"
        )
        let receipts = try await withThrowingTaskGroup(of: [AppendReceipt].self) { group in
            for index in 0..<200 {
                group.addTask { try await log.append([LogFixture.event(index)]) }
            }
            var all: [AppendReceipt] = []
            for try await receipt in group { all.append(contentsOf: receipt) }
            return all
        }
        let seqs = receipts.map(\.seq).sorted()
        #expect(seqs == Array(1...200))
        let report = try LogFixture.verify(log)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.payloadsOpened == 200)
    }

    @Test("an invalid event is refused and nothing is written")
    func invalidEventWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let storage = MemoryLogStorage()
        let log = try await AuditLog.create(
            storage: storage,
            keys: KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil),
            deviceId: "device"
        )
        var bad = LogFixture.event(1)
        bad.attributes = [:]
        await #expect(throws: AuditEventError.self) { try await log.append([LogFixture.event(0), bad]) }
        #expect(try storage.size().count == 1)
    }

    @Test("rotation switches keys; old entries stay readable; a checkpoint is sealed every interval")
    func rotationAndCheckpoints() async throws {
        let directory = try TemporaryDirectory()
        var configuration = AuditLog.Configuration()
        configuration.checkpointInterval = 10
        let keys = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
        let log = try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: keys,
            deviceId: "d",
            configuration: configuration
        )
        let firstKey = try log.activeSigningKey()
        for index in 0..<12 { _ = try await log.append([LogFixture.event(index)]) }
        let rotation = try await log.rotateKeys(reason: "test")
        #expect(rotation.header.kind == .keyRotation)
        #expect(rotation.isSigned(by: firstKey.publicKey))
        #expect(try log.activeSigningKey().id != firstKey.id)
        _ = try await log.append([LogFixture.event(99)])
        #expect(try keys.allDataKeys().count == 2)
        var options = ChainVerifier.Options(trustedKeys: [firstKey.publicKey])
        options.dataKeys = try keys.allDataKeys()
        let checkpoint = try log.latestCheckpoint()
        #expect(checkpoint != nil)
        options.trustedCheckpoint = checkpoint
        var verifier = ChainVerifier(options: options)
        var kinds: [RecordKind] = []
        try log.storage.forEachEntry { entry in
            verifier.consume(entry.bytes, storageSeq: entry.seq)
            kinds.append(try SealedEntry(serialized: entry.bytes).header.kind)
            return true
        }
        let report = verifier.finish()
        #expect(report.isClean, "\(report.problems)")
        #expect(kinds.filter { $0 == .checkpoint }.count == 1)
        #expect(report.payloadsOpened == 13)
    }

    @Test("creating a log twice is refused; opening a missing one says to run init")
    func createTwice() async throws {
        let directory = try TemporaryDirectory()
        let storage = MemoryLogStorage()
        let keys = KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
        #expect(throws: LogStoreError.self) { try AuditLog(storage: storage, keys: keys) }
        _ = try await AuditLog.create(storage: storage, keys: keys, deviceId: "d")
        await #expect(throws: LogStoreError.self) {
            _ = try await AuditLog.create(storage: storage, keys: keys, deviceId: "d")
        }
    }

    @Test("an init that loses the race to another init leaves no key files behind and the winner's log intact")
    func createRaceRemovesLosersKeys() async throws {
        let directory = try TemporaryDirectory()
        let keysPath = directory.path + "/keys"
        let storage = MemoryLogStorage()
        let winner = try await AuditLog.create(
            storage: storage,
            keys: KeyStore(directory: keysPath, credentialsDirectory: nil),
            deviceId: "winner"
        )
        let winnersKeys = try FileManager.default.contentsOfDirectory(atPath: keysPath).sorted()
        #expect(winnersKeys.count == 2)
        // The loser read the empty log before the winner's genesis committed; its transaction then sees the head.
        let loser = StaleFirstSnapshot(storage)
        let error = await #expect(throws: LogStoreError.self) {
            _ = try await AuditLog.create(
                storage: loser,
                keys: KeyStore(directory: keysPath, credentialsDirectory: nil),
                deviceId: "loser"
            )
        }
        #expect(error?.code == .alreadyInitialized)
        #expect(loser.staleReads == 1, "the loser passed the first check, as in the race")
        #expect(try FileManager.default.contentsOfDirectory(atPath: keysPath).sorted() == winnersKeys)
        #expect(try storage.size().count == 1)
        #expect(try LogFixture.verify(winner).isClean)
        #expect(try winner.info().deviceId == "winner")
    }
}

/// Storage whose first `snapshot()` reports an empty log, as a read made just before another process's genesis
/// committed; everything else, transactions included, sees the real storage.
final class StaleFirstSnapshot: ForwardingLogStorage {
    let base: any LogStorage
    private let stale = Mutex(1)

    init(_ base: any LogStorage) { self.base = base }

    var staleReads: Int { 1 - stale.withLock { $0 } }

    func snapshot() throws -> LogSnapshot {
        let isStale = stale.withLock { remaining in
            defer { remaining = max(0, remaining - 1) }
            return remaining > 0
        }
        return isStale ? LogSnapshot(head: nil, metadata: [:]) : try base.snapshot()
    }
}
