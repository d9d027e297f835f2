import AuditChain
import AuditStore
import AuditWire
import Synchronization
import Testing
import TestKit

/// How far the collector's verified copy is behind (docs/DELIVERY.md, "Health" and "Receipts"): the entries not
/// covered by a verified receipt, the age of the oldest, the lag rule (`degradedLag`, `degradedLagAge`) and what
/// `DeliveryStatus` makes of it.
@Suite("ReceiptLag")
struct ReceiptLagTests {
    static let policy = DeliveryPolicy()

    @Test(
        "the entries sealed but not covered by a verified receipt",
        arguments: [
            (UInt64?.none, UInt64?.none, UInt64(0)),
            (0, nil, 1),
            (5, nil, 6),
            (5, 5, 0),
            (10, 4, 6),
            (.max, nil, .max),
            (.max, 0, .max),
            (.max, .max, 0),
            // A receipt beyond the device's head covers everything (the agent refuses such a receipt anyway).
            (5, 7, 0),
            (nil, 3, 0),
        ]
    )
    func entries(deviceHead: UInt64?, collectorHead: UInt64?, expected: UInt64) {
        #expect(ReceiptLag(deviceHead: deviceHead, collectorHead: collectorHead, since: 1).entries == expected)
    }

    @Test("the age of the oldest uncovered entry: never negative, zero when nothing is uncovered or its time unknown")
    func age() {
        let lag = ReceiptLag(deviceHead: 9, collectorHead: 4, since: 1_000_000)
        #expect(lag.age(now: 1_000_000) == 0)
        #expect(lag.age(now: 1_300_500) == 300_500)
        // The wall clock went back past the sealing time.
        #expect(lag.age(now: 999_000) == 0)
        #expect(lag.age(now: .min) == 0)
        #expect(ReceiptLag(deviceHead: 9, collectorHead: 9, since: 1_000_000).age(now: 9_000_000) == 0)
        #expect(ReceiptLag(deviceHead: 9, collectorHead: 4, since: nil).age(now: 9_000_000) == 0)
    }

    @Test("an age that does not fit in Int64 saturates")
    func ageOverflow() {
        #expect(ReceiptLag(deviceHead: 1, collectorHead: nil, since: .min).age(now: .max) == .max)
        #expect(ReceiptLag(deviceHead: 1, collectorHead: nil, since: .max).age(now: .min) == 0)
        #expect(ReceiptLag(deviceHead: 1, collectorHead: nil, since: -1).age(now: .max) == .max)
    }

    @Test("lagging: more than degradedLag entries (1000), or the oldest older than degradedLagAge (300 s)")
    func lagging() {
        let since: Int64 = 1_000_000
        func lagging(_ entries: UInt64, age: Int64, policy: DeliveryPolicy = ReceiptLagTests.policy) -> Bool {
            ReceiptLag(deviceHead: entries, collectorHead: 0, since: since).isLagging(now: since + age, policy: policy)
        }
        #expect(!lagging(1000, age: 0))
        #expect(lagging(1001, age: 0))
        #expect(!lagging(1, age: 300_000))
        #expect(lagging(1, age: 300_001))
        #expect(!lagging(0, age: 100 * 3_600_000))
        // No receipt at all: the genesis counts.
        #expect(!ReceiptLag(deviceHead: 0, collectorHead: nil, since: since).isLagging(now: since, policy: Self.policy))
        #expect(
            ReceiptLag(deviceHead: 0, collectorHead: nil, since: since).isLagging(
                now: since + 300_001,
                policy: Self.policy
            )
        )
        // An unknown sealing time leaves the count alone to decide.
        #expect(!ReceiptLag(deviceHead: 1000, collectorHead: 0, since: nil).isLagging(now: .max, policy: Self.policy))
    }

    @Test("limits of zero or below: any uncovered entry lags, and nothing lags with none uncovered")
    func zeroLimits() {
        var policy = Self.policy
        policy.degradedLag = -5
        #expect(ReceiptLag(deviceHead: 1, collectorHead: 0, since: 10).isLagging(now: 10, policy: policy))
        #expect(!ReceiptLag(deviceHead: 1, collectorHead: 1, since: 10).isLagging(now: 10, policy: policy))
        policy = Self.policy
        policy.degradedLagAge = .zero
        #expect(!ReceiptLag(deviceHead: 1, collectorHead: 0, since: 10).isLagging(now: 10, policy: policy))
        #expect(ReceiptLag(deviceHead: 1, collectorHead: 0, since: 10).isLagging(now: 11, policy: policy))
        policy.degradedLag = .max
        #expect(!ReceiptLag(deviceHead: 1_000_000, collectorHead: nil, since: 10).isLagging(now: 10, policy: policy))
        // A count beyond any Int limit still lags.
        #expect(ReceiptLag(deviceHead: .max, collectorHead: nil, since: 10).isLagging(now: 10, policy: policy))
    }

    /// A log whose entries are sealed at the times `clock` gives.
    static func log(_ directory: TemporaryDirectory, clock: SealingClock) async throws -> AuditLog {
        var configuration = AuditLog.Configuration()
        configuration.now = { AuditTimestamp(millisecondsSinceEpoch: clock.time.withLock { $0 }) }
        return try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: LogFixture.keys(directory),
            deviceId: "device",
            configuration: configuration
        )
    }

    /// Keeps a receipt for `seq` beside the log, as the engine does once it verified one.
    static func keepReceipt(_ log: AuditLog, seq: UInt64) async throws {
        let info = try log.info()
        let stored = try #require(try log.storage.entries(from: seq, through: seq, limit: 1).first)
        let receipt = CollectorReceipt(
            logId: info.logId,
            seq: seq,
            entryHash: try SealedEntry(serialized: stored.bytes).entryHash,
            receivedAt: AuditTimestamp(millisecondsSinceEpoch: 0),
            key: .generate()
        )
        try await keepMetadata(
            log,
            [CollectorTrust.Meta.receipt: String(decoding: receipt.json.canonicalBytes, as: UTF8.self)]
        )
    }

    static func keepMetadata(_ log: AuditLog, _ metadata: [String: String]) async throws {
        try await log.storage.append { _ in (LogAppend(entries: [], metadata: metadata), ()) }
    }

    @Test("read: the device head, the kept receipt's seq, and the sealing time of the first entry after it")
    func read() async throws {
        let directory = try TemporaryDirectory()
        let clock = SealingClock(1_000_000)
        let log = try await Self.log(directory, clock: clock)
        var lag = try ReceiptLag.read(log.storage)
        #expect(lag == ReceiptLag(deviceHead: 0, collectorHead: nil, since: 1_000_000))
        for index in 1...3 {
            clock.time.withLock { $0 = 1_000_000 + Int64(index) * 10_000 }
            _ = try await log.append([LogFixture.event(index)])
        }
        #expect(try ReceiptLag.read(log.storage) == ReceiptLag(deviceHead: 3, collectorHead: nil, since: 1_000_000))
        try await Self.keepReceipt(log, seq: 1)
        lag = try ReceiptLag.read(log.storage)
        #expect(lag == ReceiptLag(deviceHead: 3, collectorHead: 1, since: 1_020_000))
        #expect(lag.entries == 2)
        #expect(lag.age(now: 1_050_000) == 30_000)
        try await Self.keepReceipt(log, seq: 3)
        #expect(try ReceiptLag.read(log.storage) == ReceiptLag(deviceHead: 3, collectorHead: 3, since: nil))
    }

    @Test("read: a kept receipt that does not parse counts as none")
    func unreadableReceipt() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(directory, clock: SealingClock(5_000))
        _ = try await log.append([LogFixture.event(1)])
        try await Self.keepMetadata(log, [CollectorTrust.Meta.receipt: #"{"v":1,"seq":1}"#])
        #expect(try ReceiptLag.read(log.storage) == ReceiptLag(deviceHead: 1, collectorHead: nil, since: 5_000))
    }

    @Test("status: a stored healthy becomes degraded while the copy lags; failing and unknown stay what they are")
    func statusHealth() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(directory, clock: SealingClock(1_000_000))
        _ = try await log.append([LogFixture.event(1)])
        #expect(try DeliveryStatus.read(log.storage, now: 1_000_000).health == "unknown")
        #expect(try DeliveryStatus.read(log.storage, now: 9_000_000).health == "unknown")
        try await Self.keepMetadata(log, [DeliveryStatus.Meta.health: "healthy"])
        #expect(try DeliveryStatus.read(log.storage, now: 1_300_000).health == "healthy")
        #expect(try DeliveryStatus.read(log.storage, now: 1_300_001).health == "degraded")
        try await Self.keepMetadata(log, [DeliveryStatus.Meta.health: "failing"])
        #expect(try DeliveryStatus.read(log.storage, now: 9_000_000).health == "failing")
        // Covered up to the head: nothing lags, however late.
        try await Self.keepMetadata(log, [DeliveryStatus.Meta.health: "healthy"])
        try await Self.keepReceipt(log, seq: 1)
        #expect(try DeliveryStatus.read(log.storage, now: 9_000_000).health == "healthy")
    }

    @Test("status: a version 2 log's epoch, stale after two epoch lengths without an epoch record: degraded")
    func statusEpoch() async throws {
        let directory = try TemporaryDirectory()
        let clock = SealingClock(1_795_000_000_000)
        var configuration = AuditLog.Configuration()
        configuration.now = { AuditTimestamp(millisecondsSinceEpoch: clock.time.withLock { $0 }) }
        configuration.formatVersion = FormatConstants.version2
        configuration.epochSeconds = 600
        let log = try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: LogFixture.keys(directory),
            deviceId: "device",
            configuration: configuration
        )
        try await Self.keepReceipt(log, seq: 0)
        try await Self.keepMetadata(log, [DeliveryStatus.Meta.health: "healthy"])
        // Two epoch lengths after the genesis: not yet stale.
        let due = try DeliveryStatus.read(log.storage, now: 1_795_001_200_000)
        #expect(due.epoch?.number == 0 && !due.epochStale && due.health == "healthy")
        let late = try DeliveryStatus.read(log.storage, now: 1_795_001_200_001)
        #expect(late.epochStale && late.health == "degraded")
        let epoch = try #require(late.json.objectValue?["epoch"]?.objectValue)
        #expect(epoch["epoch"] == .integer(0) && epoch["stale"] == .bool(true))
        #expect(epoch["epochSeconds"] == .integer(600))
        #expect(epoch["startedAt"] == .string(AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000).rfc3339))
        // The epoch ended (the agent's timer does it on time): fresh again.
        clock.time.withLock { $0 = 1_795_001_200_001 }
        #expect(try await log.endEpochIfDue() != nil)
        let ended = try DeliveryStatus.read(log.storage, now: 1_795_001_200_002)
        #expect(ended.epoch?.number == 1 && !ended.epochStale)
        // A version 1 log has no epoch.
        let v1 = try await Self.log(try TemporaryDirectory(), clock: clock)
        #expect(try DeliveryStatus.read(v1.storage).epoch == nil)
        #expect(try DeliveryStatus.read(v1.storage).json.objectValue?["epoch"] == .null)
    }

    @Test("status: the count alone makes a stored healthy degraded")
    func statusCount() async throws {
        let directory = try TemporaryDirectory()
        let log = try await Self.log(directory, clock: SealingClock(1_000_000))
        _ = try await log.append((1...3).map(LogFixture.event))
        try await Self.keepMetadata(log, [DeliveryStatus.Meta.health: "healthy"])
        var policy = DeliveryPolicy()
        policy.degradedLag = 4
        policy.degradedPending = 100
        #expect(try DeliveryStatus.read(log.storage, policy: policy, now: 1_000_000).health == "healthy")
        policy.degradedLag = 3
        #expect(try DeliveryStatus.read(log.storage, policy: policy, now: 1_000_000).health == "degraded")
    }

    @Test("status JSON: the verified head, the device head and the lag in entries, since and seconds")
    func statusJSON() async throws {
        let directory = try TemporaryDirectory()
        let clock = SealingClock(1_795_000_000_000)
        let log = try await Self.log(directory, clock: clock)
        clock.time.withLock { $0 = 1_795_000_060_000 }
        _ = try await log.append((1...2).map(LogFixture.event))
        try await Self.keepReceipt(log, seq: 0)
        let json = try #require(try DeliveryStatus.read(log.storage, now: 1_795_000_090_500).json.objectValue)
        #expect(json["receiptSeq"] == .integer(0))
        #expect(json["collectorHead"] == .integer(0))
        #expect(json["deviceHead"] == .integer(2))
        #expect(json["lagEntries"] == .integer(2))
        #expect(json["lagSince"] == .string(AuditTimestamp(millisecondsSinceEpoch: 1_795_000_060_000).rfc3339))
        #expect(json["lagSeconds"] == .integer(30))
        try await Self.keepReceipt(log, seq: 2)
        let covered = try #require(try DeliveryStatus.read(log.storage, now: 1_795_000_090_500).json.objectValue)
        #expect(covered["lagEntries"] == .integer(0))
        #expect(covered["lagSince"] == .null)
        #expect(covered["lagSeconds"] == .integer(0))
    }
}

/// The sealing time of a test log, set by the test.
final class SealingClock: Sendable {
    let time: Mutex<Int64>

    init(_ time: Int64) { self.time = Mutex(time) }
}
