import AuditChain
@testable import AuditStore
@testable import AuditSync
@testable import AuditWire
import Crypto
import Foundation
import Synchronization
import TestKit
import TransparencyLog

/// A transport whose answers the test scripts; by default it acts as a collector that accepts everything.
final class ScriptedTransport: SyncTransport {
    enum Answer: Sendable {
        case acceptAll
        case failure(String)
        case status(Int, retryAfter: String?)
        case perEntry(@Sendable (UInt64) -> SyncEntryResult?)
        case tooLargeAbove(Int)
    }

    private let state = Mutex((answer: Answer.acceptAll, batches: [SyncBatch](), delivered: [UInt64: [UInt8]]()))

    private let reachable = Mutex(false)
    /// Makes a receipt from the batch and what the scripted collector holds by seq.
    typealias MakeReceipt = @Sendable (SyncBatch, [UInt64: [UInt8]]) -> TreeReceipt?
    private let receipt = Mutex<MakeReceipt?>(nil)
    /// The key the scripted collector signs its receipts with and publishes.
    let collectorSigningKey = SigningKey.generate()
    private let publishedKey = Mutex<Curve25519.Signing.PublicKey??>(nil)

    /// Makes every 200 answer carry the receipt this returns for the batch (by default, a tree receipt signed with
    /// ``collectorSigningKey`` for the contiguous head of what it holds, bridging gaps with removal records).
    func setReceipt(_ make: MakeReceipt?) { receipt.withLock { $0 = make } }

    /// Publishes another key at the key endpoint (`.some(nil)`: none).
    func publishKey(_ key: Curve25519.Signing.PublicKey?) { publishedKey.withLock { $0 = .some(key) } }

    func collectorKey() async -> Curve25519.Signing.PublicKey? {
        publishedKey.withLock { $0 } ?? collectorSigningKey.publicKey
    }

    /// The contiguous head of `held` (gaps bridged by accounted-removal records with a full count): its seq, or nil
    /// without a genesis.
    static func contiguousHead(_ held: [UInt64: [UInt8]]) -> UInt64? {
        guard let genesis = held[0], var hash = try? SealedEntry(serialized: genesis).entryHash else { return nil }
        var removals: [SystemRecord.Removal] = []
        for bytes in held.values {
            if let entry = try? SealedEntry(serialized: bytes), entry.header.kind == .accountedRemoval,
                case .accountedRemoval(let removal)? = try? SystemRecord(
                    kind: entry.header.kind,
                    payload: entry.payload
                ),
                removal.count == removal.lastSeq - removal.firstSeq + 1
            {
                removals.append(removal)
            }
        }
        var seq: UInt64 = 0
        var confirmed: UInt64 = 0
        while true {
            if let bytes = held[seq + 1], let entry = try? SealedEntry(serialized: bytes), entry.header.prevHash == hash
            {
                seq += 1
                hash = entry.entryHash
                confirmed = seq
            } else if let bridge = removals.filter({ $0.firstSeq == seq + 1 }).max(by: { $0.lastSeq < $1.lastSeq }) {
                seq = bridge.lastSeq
                hash = bridge.lastRemovedHash
            } else {
                break
            }
        }
        return confirmed
    }

    /// A version 2 receipt as an honest collector makes it (docs/PROTOCOL.md section 3.2): the tree's leaves are
    /// the held entries up to the contiguous head, in seq order; the checkpoint is signed with `key`; the proofs are
    /// the last leaf's inclusion and the consistency from `batch.treeSize`. `leaves` may alter the leaves first (a
    /// forking collector).
    static func treeReceipt(
        _ held: [UInt64: [UInt8]],
        batch: SyncBatch,
        key: SigningKey,
        leaves alter: ([[UInt8]]) -> [[UInt8]] = { $0 }
    ) -> TreeReceipt? {
        guard let head = contiguousHead(held), let last = held[head],
            let entryHash = try? SealedEntry(serialized: last).entryHash
        else { return nil }
        let leaves = alter(held.keys.sorted().filter { $0 <= head }.compactMap { held[$0] })
        let tree = MerkleTree(leaves: leaves)
        let size = UInt64(leaves.count)
        let origin = "scripted.localhost/" + Hex.encode(batch.logId)
        guard let root = tree.root(size: size), let inclusion = tree.inclusionProof(index: size - 1, size: size),
            let signer = try? NoteSigner(name: origin, privateKey: key.privateKey),
            let note = try? Checkpoint(origin: origin, size: size, rootHash: root).sign(with: [signer])
        else { return nil }
        var consistency: TreeReceipt.Consistency?
        if let from = batch.treeSize, from > 0, from < size {
            consistency = .init(from: from, proof: tree.consistencyProof(first: from, second: size) ?? [])
        }
        return TreeReceipt(
            logId: batch.logId,
            seq: head,
            entryHash: entryHash,
            leafIndex: size - 1,
            checkpoint: String(decoding: note.bytes, as: UTF8.self),
            inclusion: inclusion,
            consistency: consistency
        )
    }

    func set(_ answer: Answer) { state.withLock { $0.answer = answer } }
    func setReachable(_ value: Bool) { reachable.withLock { $0 = value } }
    func isReachable() async -> Bool { reachable.withLock { $0 } }
    var batches: [SyncBatch] { state.withLock { $0.batches } }
    /// What the "collector" holds, by seq.
    var delivered: [UInt64: [UInt8]] { state.withLock { $0.delivered } }

    func send(_ batch: SyncBatch) async -> TransportOutcome {
        state.withLock { state in
            state.batches.append(batch)
            var results: [SyncEntryResult] = []
            switch state.answer {
            case .failure(let reason):
                return .failure(reason)
            case .status(let code, let retryAfter):
                return .response(status: code, retryAfter: retryAfter, body: Array(#"{"error":"scripted"}"#.utf8))
            case .tooLargeAbove(let limit) where batch.entries.count > limit:
                return .response(status: 413, retryAfter: nil, body: [])
            case .perEntry(let decide):
                for entry in batch.entries {
                    let result = decide(entry.seq) ?? SyncEntryResult(seq: entry.seq, status: .accepted)
                    if result.status != .rejected { state.delivered[entry.seq] = entry.bytes }
                    results.append(result)
                }
            case .acceptAll, .tooLargeAbove:
                for entry in batch.entries {
                    let duplicate = state.delivered[entry.seq] != nil
                    state.delivered[entry.seq] = entry.bytes
                    results.append(SyncEntryResult(seq: entry.seq, status: duplicate ? .duplicate : .accepted))
                }
            }
            let delivered = state.delivered
            let made =
                receipt.withLock { $0 }.map { $0(batch, delivered) }
                ?? Self.treeReceipt(delivered, batch: batch, key: collectorSigningKey)
            let body = SyncResponse(results: results, treeReceipt: made).json.canonicalBytes
            return .response(status: 200, retryAfter: nil, body: body)
        }
    }
}

/// A log on memory storage (or SQLite) with an engine over a scripted transport and manual clocks.
struct DeliveryFixture {
    let directory: TemporaryDirectory
    let log: AuditLog
    let transport = ScriptedTransport()
    let clocks = ManualClocks()
    let engine: SyncEngine

    init(policy: DeliveryPolicy = .init(), sqlite: Bool = false) async throws {
        directory = try TemporaryDirectory()
        let clocks = clocks
        var configuration = AuditLog.Configuration()
        configuration.now = { AuditTimestamp(millisecondsSinceEpoch: clocks.wall) }
        log = try await AuditLog.create(
            storage: sqlite ? try SQLiteLogStorage(path: directory.path + "/log.sqlite") : MemoryLogStorage(),
            keys: KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil),
            deviceId: "device",
            configuration: configuration
        )
        engine = try SyncEngine(log: log, transport: transport, policy: policy, clocks: clocks.clocks)
    }

    /// Appends `count` events of `type` (routine: BIOMETRIC_AUTH_SUCCESS; critical: BIOMETRIC_AUTH_FAILURE).
    @discardableResult
    func append(_ count: Int, critical: Bool = false) async throws -> [UInt64] {
        let events = (0..<count).map { index in
            critical
                ? AuditEvent(
                    type: "BIOMETRIC_AUTH_FAILURE",
                    occurredAt: AuditTimestamp(millisecondsSinceEpoch: clocks.wall),
                    userId: "user",
                    deviceId: "device",
                    attributes: ["attemptCount": .integer(1), "errorCode": .string("NO_MATCH")],
                    idempotencyKey: UUID().uuidString
                )
                : AuditEvent(
                    type: "BIOMETRIC_AUTH_SUCCESS",
                    occurredAt: AuditTimestamp(millisecondsSinceEpoch: clocks.wall),
                    userId: "user",
                    deviceId: "device",
                    attributes: ["unlockDurationMs": .integer(Int64(index))],
                    idempotencyKey: UUID().uuidString
                )
        }
        return try await log.append(events).map(\.seq)
    }

    var table: DeliveryTable { get throws { try log.storage.deliveryTable() } }
    var status: DeliveryStatus { get throws { try DeliveryStatus.read(log.storage, now: clocks.wall) } }

    /// The accounted-removal records in the log, in order.
    func removalRecords() throws -> [SystemRecord.Removal] {
        var records: [SystemRecord.Removal] = []
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            if entry.header.kind == .accountedRemoval,
                case .accountedRemoval(let removal) = try SystemRecord(kind: entry.header.kind, payload: entry.payload)
            {
                records.append(removal)
            }
            return true
        }
        return records
    }
}
