import AuditChain
import AuditCollector
import AuditStore
import AuditSync
import AuditWire
import Crypto
import Foundation
import Synchronization
import Testing
import TestKit
import TransparencyLog

/// Sends each batch to the next of several transports in turn: one agent whose batches alternate between replicas
/// (a load balancer with no affinity).
final class AlternatingTransport: SyncTransport {
    private let transports: [any SyncTransport]
    private let next = Mutex(0)

    init(_ transports: [any SyncTransport]) { self.transports = transports }

    func send(_ batch: SyncBatch) async -> TransportOutcome {
        let index = next.withLock { value in
            defer { value += 1 }
            return value % transports.count
        }
        return await transports[index].send(batch)
    }
}

/// An agent of the replica tests: a log in a state directory of its own, delivered by a ``SyncEngine``.
struct ReplicaAgent {
    let log: AuditLog
    let engine: SyncEngine
    let clocks: ManualClocks
    let recorder: RecordingTransport?

    init(
        directory: String,
        transport: any SyncTransport,
        collectorKey: Curve25519.Signing.PublicKey,
        batchSize: Int
    ) async throws {
        let state = StateDirectory(path: directory)
        try state.create()
        log = try await AuditLog.create(
            storage: SQLiteLogStorage(path: state.databasePath),
            keys: KeyStore(directory: state.keysPath, credentialsDirectory: nil),
            deviceId: "device-\(UUID().uuidString.prefix(8))"
        )
        clocks = ManualClocks(monotonic: .seconds(1000), wall: Int64(Date().timeIntervalSince1970 * 1000))
        recorder = transport as? RecordingTransport
        var policy = DeliveryPolicy()
        policy.batchSize = batchSize
        engine = try SyncEngine(
            log: log,
            transport: transport,
            policy: policy,
            clocks: clocks.clocks,
            collectorKey: collectorKey
        )
    }

    /// Appends `count` events, then cycles (bounded) until nothing is pending; returns the failures seen.
    func appendAndDeliver(_ count: Int) async throws -> [String] {
        let events = (0..<count).map { index in
            AuditEvent(
                type: "BIOMETRIC_AUTH_SUCCESS",
                occurredAt: AuditTimestamp.now(),
                userId: "user-\(index % 5)",
                deviceId: "device-replica",
                attributes: ["unlockDurationMs": .integer(Int64(100 + index))],
                idempotencyKey: UUID().uuidString
            )
        }
        _ = try await log.append(events)
        var failures: [String] = []
        for _ in 0..<200 {
            let report = try await engine.cycle()
            if let failure = report.failure {
                failures.append(failure)
                clocks.advance(.seconds(400))
            }
            if try log.storage.deliveryTable().items.isEmpty { return failures }
        }
        Issue.record("delivery did not finish: \(failures.suffix(3))")
        return failures
    }
}

/// Two collector replicas sharing one PostgreSQL database and nothing else (docs/COLLECTOR.md section 5): any
/// replica takes any batch of any log, at the same time as the other.
@Suite("Two collector replicas on one PostgreSQL", .enabled(if: PostgresFixture.isAvailable))
struct CollectorReplicaTests {
    /// Agents on either replica and one alternating between them, concurrently: every copy complete, verified,
    /// free of duplicates and forks, and every receipt a prefix of one tree.
    @Test("several agents on two replicas, one alternating: copies complete and verified, receipts of one tree")
    func concurrentAgentsOnTwoReplicas() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        try await withCollector(directory) { clientA, replicaA in
            try await withCollector(directory) { clientB, replicaB in
                #expect(
                    replicaA.receiptKey.publicKey.rawRepresentation == replicaB.receiptKey.publicKey.rawRepresentation
                )
                let key = replicaA.receiptKey.publicKey
                func transport(_ client: CollectorClient) -> RecordingTransport {
                    RecordingTransport(
                        HTTPSyncTransport(
                            backend: URL(string: "http://127.0.0.1:\(client.port)")!,
                            token: nil,
                            timeout: .seconds(60)
                        )
                    )
                }
                // Four agents, two on each replica, and a fifth whose batches alternate between them.
                var agents: [ReplicaAgent] = []
                for index in 0..<4 {
                    agents.append(
                        try await ReplicaAgent(
                            directory: directory.path + "/agent-\(index)",
                            transport: transport(index % 2 == 0 ? clientA : clientB),
                            collectorKey: key,
                            batchSize: 37
                        )
                    )
                }
                let alternatingRecorders = [transport(clientA), transport(clientB)]
                agents.append(
                    try await ReplicaAgent(
                        directory: directory.path + "/agent-alternating",
                        transport: AlternatingTransport(alternatingRecorders),
                        collectorKey: key,
                        batchSize: 23
                    )
                )
                let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                    for agent in agents {
                        group.addTask {
                            var failures: [String] = []
                            for _ in 0..<3 { failures += try await agent.appendAndDeliver(150) }
                            return failures
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(failures.isEmpty, "\(failures.prefix(5))")
                // Both replicas answered the alternating agent.
                #expect(alternatingRecorders.allSatisfy { !$0.responses.isEmpty })

                let store = replicaA.store
                for agent in agents {
                    let info = try agent.log.info()
                    let held = try await store.entries(logId: info.logId)
                    // Complete, once each, byte for byte.
                    #expect(held.map(\.seq) == Array(0...info.head.seq))
                    let local = try agent.log.storage.entries(
                        from: 0,
                        through: info.head.seq,
                        limit: Int(info.head.seq) + 1
                    )
                    #expect(held.map(\.bytes) == local.map(\.bytes))
                    // Verified: the collector's copy is a valid chain under the device's key.
                    var verifier = ChainVerifier(
                        options: ChainVerifier.Options(
                            trustedKeys: try agent.log.keys.allSigningKeys().map(\.publicKey)
                        )
                    )
                    for entry in held { verifier.consume(entry.bytes) }
                    let report = verifier.finish()
                    #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
                    #expect(report.entriesChecked == held.count)
                    #expect(try await store.forks(logId: info.logId).isEmpty)
                    #expect(try await store.chainBreaks(logId: info.logId).isEmpty)
                    let head = try await replicaB.store.head(logId: info.logId)
                    #expect(head?.seq == info.head.seq && head?.hash == info.head.hash)
                    #expect(try DeliveryStatus.read(agent.log.storage).receiptSeq == info.head.seq)
                    // Every checkpoint either replica signed for this log is a prefix of the one final tree.
                    let leaves = held.map(\.bytes)
                    let origin = replicaA.origin(logId: info.logId)
                    let noteKey = try NoteVerifierKey(name: origin, publicKey: key)
                    let recorders = agent.recorder.map { [$0] } ?? alternatingRecorders
                    var sizes = Set<UInt64>()
                    for response in recorders.flatMap(\.responses) {
                        let receipt = try #require(response.treeReceipt)
                        guard receipt.logId == info.logId else { continue }
                        let checkpoint = try Checkpoint(
                            signedNote: try SignedNote(parsing: Array(receipt.checkpoint.utf8)),
                            origin: origin,
                            keys: [noteKey]
                        )
                        #expect(
                            checkpoint.rootHash == MerkleTree(leaves: Array(leaves.prefix(Int(checkpoint.size)))).root()
                        )
                        sizes.insert(checkpoint.size)
                    }
                    #expect(sizes.contains(UInt64(leaves.count)))
                }
            }
        }
    }

    /// The same entries sent to both replicas at the same instant, under different batch ids, and two different
    /// validly signed entries for the same seqs raced to either replica: the database's per-log lock lets exactly
    /// one replica store each seq; the other answers duplicate (same bytes) or fork (other bytes), never an error,
    /// and the receipts both sign are of one tree.
    @Test("the same seqs raced to both replicas: each stored once, the loser told duplicate or fork")
    func racesOnOneLog() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        try await withCollector(directory) { clientA, replicaA in
            try await withCollector(directory) { clientB, _ in
                var chain = CollectorChain()
                chain.appendEvents(599)
                // Same bytes, different batch ids (so no replay answers for the other): per entry, one accepted and
                // one duplicate.
                for start in stride(from: 0, to: 600, by: 60) {
                    let seqs = Array(start..<start + 60)
                    var first = chain.batch(seqs)
                    var second = first
                    first.batchId = "race-a-\(start)"
                    second.batchId = "race-b-\(start)"
                    async let a = clientA.post(first)
                    async let b = clientB.post(second)
                    let (replyA, replyB) = try await (a, b)
                    #expect(replyA.status == 200 && replyB.status == 200, "\(replyA.status) \(replyB.status)")
                    let resultsA = try #require(replyA.response?.results)
                    let resultsB = try #require(replyB.response?.results)
                    for (x, y) in zip(resultsA, resultsB) {
                        #expect(Set([x.status, y.status]) == [.accepted, .duplicate], "seq \(x.seq): \(x) \(y)")
                    }
                }
                // Two histories from seq 600 on, both signed by the device key: raced, one wins each seq.
                var left = chain
                var right = chain
                left.appendEvents(40)
                right.appendEvents(40)
                async let a = clientA.post(left.batch(Array(600..<640)))
                async let b = clientB.post(right.batch(Array(600..<640)))
                let (replyA, replyB) = try await (a, b)
                #expect(replyA.status == 200 || replyA.status == 409)
                #expect(replyB.status == 200 || replyB.status == 409)
                let resultsA = try #require(replyA.response?.results)
                let resultsB = try #require(replyB.response?.results)
                var winners: [Int] = []
                for (x, y) in zip(resultsA, resultsB) {
                    let statuses = [x.status, y.status]
                    #expect(statuses.filter { $0 == .accepted }.count == 1, "seq \(x.seq): \(x) \(y)")
                    winners.append(x.status == .accepted ? 0 : 1)
                }
                let store = replicaA.store
                let held = try await store.entries(logId: chain.logId)
                #expect(held.count == 640)
                // What is held is each seq's winner; every loser is kept as fork evidence.
                for (offset, winner) in winners.enumerated() {
                    let seq = 600 + offset
                    let expected = (winner == 0 ? left : right).entries[seq].serialized
                    #expect(held[seq].bytes == expected)
                }
                let forks = try await store.forks(logId: chain.logId)
                #expect(forks.count == winners.count)
                // The head is the longest run both agree is linked; the tree covers exactly it, and both replicas'
                // receipts are prefixes of it.
                let head = try #require(try await store.head(logId: chain.logId))
                let tree = try await store.treeHead(logId: chain.logId)
                #expect(tree.size == head.seq + 1)
                #expect(tree.root == MerkleTree(leaves: held.prefix(Int(tree.size)).map(\.bytes)).root())
                for reply in [replyA, replyB] {
                    guard let receipt = reply.response?.treeReceipt else { continue }
                    let note = try Checkpoint(parsing: try SignedNote(parsing: Array(receipt.checkpoint.utf8)).text)
                    #expect(note.size <= tree.size)
                    #expect(note.rootHash == MerkleTree(leaves: held.prefix(Int(note.size)).map(\.bytes)).root())
                }
            }
        }
    }
}
