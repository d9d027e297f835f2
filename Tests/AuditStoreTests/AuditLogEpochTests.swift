import AuditChain
import Crypto
@testable import AuditStore
import Foundation
import Synchronization
import Testing
import TestKit

/// Format version 2's epochs on a real log (docs/FORMAT.md, section 13.5): the key evolves, the outgoing private key
/// is erased once the epoch record is committed, runs are closed or recovered, a version 1 log upgrades.
@Suite("AuditLog epochs")
struct AuditLogEpochTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        let now = Mutex(AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000))
        func advance(seconds: Int64) {
            now.withLock { $0 = AuditTimestamp(millisecondsSinceEpoch: $0.millisecondsSinceEpoch + seconds * 1000) }
        }
    }

    static func configuration(_ clock: Clock, version: UInt8 = FormatConstants.version2) -> AuditLog.Configuration {
        var configuration = AuditLog.Configuration()
        configuration.formatVersion = version
        configuration.epochSeconds = 60
        configuration.now = { clock.now.withLock { $0 } }
        return configuration
    }

    static func log(
        in directory: TemporaryDirectory,
        _ clock: Clock,
        version: UInt8 = FormatConstants.version2
    ) async throws -> AuditLog {
        try await AuditLog.create(
            storage: SQLiteLogStorage(path: directory.path + "/log.sqlite"),
            keys: LogFixture.keys(directory),
            deviceId: "device",
            configuration: configuration(clock, version: version)
        )
    }

    /// Verifies the stored log with only its genesis key pinned.
    static func verify(_ log: AuditLog, genesisKey: Curve25519.Signing.PublicKey) throws -> VerificationReport {
        var verifier = ChainVerifier(options: ChainVerifier.Options(trustedKeys: [genesisKey]))
        try log.storage.forEachEntry { entry in
            verifier.consume(entry.bytes, storageSeq: entry.seq)
            return true
        }
        return verifier.finish()
    }

    /// Every byte of every file under `path` (the database, its WAL and shm, the key files).
    static func allBytes(under path: String) -> [[UInt8]] {
        let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return names.compactMap { FileManager.default.contents(atPath: path + "/" + $0).map { Array($0) } }
    }

    @Test("an epoch ends when due and not before; the outgoing private key is then nowhere in the state directory")
    func epochEndErasesTheOutgoingKey() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let log = try await Self.log(in: directory, clock)
        let genesisKey = try log.activeSigningKey()
        _ = try await log.append((0..<5).map(LogFixture.event))
        #expect(try await log.endEpochIfDue() == nil)
        clock.advance(seconds: 61)
        let record = try #require(try await log.endEpochIfDue())
        #expect(record.header.kind == .epoch && record.header.carriesSignature)
        #expect(try await log.endEpochIfDue() == nil)
        _ = try await log.append((5..<8).map(LogFixture.event))

        let active = try log.activeSigningKey()
        #expect(active.id != genesisKey.id)
        #expect(log.keys.signingKeyFileIds() == [active.id])
        let secret = Array(genesisKey.privateKey.rawRepresentation)
        for bytes in Self.allBytes(under: directory.path) {
            #expect(!bytes.contains(secret), "the erased epoch key is still in a file of the state directory")
        }
        #expect(try log.currentEpoch()?.number == 1)

        let report = try Self.verify(log, genesisKey: genesisKey.publicKey)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.formatVersion == 2 && report.epochs == 2)
        // One signature per commit: genesis, two appends, the epoch record.
        #expect(report.signaturesChecked == 4)
    }

    @Test("a rotation in version 2 is an early epoch end with a new data key; old events stay readable")
    func rotationIsAnEpochEnd() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let log = try await Self.log(in: directory, clock)
        let genesisKey = try log.activeSigningKey().publicKey
        _ = try await log.append([LogFixture.event(1)])
        let record = try await log.rotateKeys(reason: "operator")
        #expect(record.header.kind == .epoch)
        guard case .epoch(let epoch) = try SystemRecord(kind: .epoch, payload: record.payload) else {
            Issue.record("not an epoch record")
            return
        }
        #expect(epoch.reason == "rotation: operator" && epoch.epoch == 1)
        _ = try await log.append([LogFixture.event(2)])
        #expect(try log.keys.allDataKeys().count == 2)
        #expect(try LogFixture.events(log).map(\.idempotencyKey) == ["k1", "k2"])
        #expect(try Self.verify(log, genesisKey: genesisKey).isClean)
    }

    @Test("runs: a start after a clean stop seals nothing, a start after a crash seals a crash recovery record")
    func runs() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let log = try await Self.log(in: directory, clock)
        let genesisKey = try log.activeSigningKey().publicKey
        #expect(try await log.beginRun() == nil)
        _ = try await log.append([LogFixture.event(1)])
        // The process dies: no close record. The next start says so.
        let recovered = try #require(try await log.beginRun())
        #expect(recovered.header.kind == .crashRecovery)
        let close = try #require(try await log.endRun())
        #expect(close.header.kind == .close)
        #expect(try await log.beginRun() == nil)
        _ = try await log.endRun()
        let report = try Self.verify(log, genesisKey: genesisKey)
        #expect(report.isClean && report.closed)
    }

    @Test("a crash between an epoch's commit and its erasure: the next start erases the ended epoch's key")
    func leftoverKeysAreErased() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let log = try await Self.log(in: directory, clock)
        let old = try log.activeSigningKey()
        clock.advance(seconds: 61)
        try await log.endEpochIfDue()
        // As if the erasure had not happened: the old key file is back.
        try log.keys.write(old)
        #expect(log.keys.signingKeyFileIds().count == 2)
        let reopened = try AuditLog(storage: log.storage, keys: log.keys, configuration: Self.configuration(clock))
        #expect(try await reopened.eraseRetiredSigningKeys() == [old.id])
        #expect(log.keys.signingKeyFileIds() == [try reopened.activeSigningKey().id])
    }

    @Test("a version 1 log upgrades without rewriting an entry; its retired keys are erased; it verifies end to end")
    func upgradeFromVersion1() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let log = try await Self.log(in: directory, clock, version: FormatConstants.version)
        let genesisKey = try log.activeSigningKey().publicKey
        _ = try await log.append([LogFixture.event(1)])
        _ = try await log.rotateKeys(reason: "v1 rotation")
        _ = try await log.append([LogFixture.event(2)])
        let before = try log.storage.entries(from: 0, through: .max, limit: 100).map(\.bytes)
        #expect(log.keys.signingKeyFileIds().count == 2)
        let (record, erased) = try await log.upgradeToVersion2()
        #expect(record.header.version == 2 && record.header.kind == .epoch)
        #expect(erased.count == 2)
        #expect(log.keys.signingKeyFileIds() == [try log.activeSigningKey().id])
        _ = try await log.append([LogFixture.event(3)])
        let after = try log.storage.entries(from: 0, through: .max, limit: 100).map(\.bytes)
        #expect(Array(after.prefix(before.count)) == before)
        let report = try Self.verify(log, genesisKey: genesisKey)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.formatVersion == 2 && report.epochs == 2)
        await #expect(throws: LogStoreError.self) { try await log.upgradeToVersion2() }
    }

    @Test("version 1 records are refused in a version 2 log and version 2 records in a version 1 log")
    func recordsOfTheOtherVersion() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let v1 = try await Self.log(in: directory, clock, version: FormatConstants.version)
        await #expect(throws: LogStoreError.self) { try await v1.appendSystemRecord(.close(.init(reason: "x"))) }
        #expect(try await v1.beginRun() == nil)
        #expect(try await v1.endRun() == nil)
        #expect(try await v1.endEpochIfDue() == nil)
    }
}
