import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Synchronization
import Testing
import TestKit
import TransparencyLog

/// Two built `auditd collector` processes on one PostgreSQL database; one is killed with SIGKILL while batches
/// alternate between them (docs/COLLECTOR.md section 5). A replica holds nothing another needs: what either
/// acknowledged is in the database, the other goes on, and the restarted one serves the same log.
@Suite("Replica killed during ingest", .serialized, .enabled(if: PostgresFixture.isAvailable))
struct ReplicaCrashTests {
    /// Starts a replica; returns it with a client of it.
    static func start(_ directory: CollectorTempDir, name: String) async throws -> (ServerProcess, CollectorClient) {
        let server = try await ServerProcess.start(
            [
                "collector", "--db", directory.database, "--key", directory.keyPath, "--listen", "127.0.0.1:0",
                "--postgres-connections", "4",
            ],
            outputPath: directory.path + "/\(name).log"
        )
        return (server, CollectorClient(port: server.port, token: nil))
    }

    @Test("SIGKILL of one replica while batches alternate: nothing acknowledged is lost, the other goes on")
    func killOneReplica() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        var chain = CollectorChain()
        chain.appendEvents(3999)
        let batches = stride(from: 0, to: chain.entries.count, by: 100).map { start in
            chain.batch(Array(start..<min(start + 100, chain.entries.count)))
        }
        var (a, clientA) = try await Self.start(directory, name: "a")
        let (b, clientB) = try await Self.start(directory, name: "b")
        defer {
            a.child.send(SIGKILL)
            b.child.send(SIGKILL)
        }
        // Batches alternate between the replicas; a batch whose replica does not answer goes to the other (as a
        // load balancer retries), and the replica A is killed at a random instant.
        let finished = Flag()
        let feeder = Task { [clientA, clientB] () -> (acknowledged: UInt64?, delivered: Int, failovers: Int) in
            defer { finished.set() }
            var acknowledged: UInt64?
            var failovers = 0
            var aAlive = true
            for (index, batch) in batches.enumerated() {
                let first = index % 2 == 0 && aAlive ? clientA : clientB
                var reply = try? await first.post(batch)
                if reply?.status != 200 {
                    if first.port == clientA.port { aAlive = false }
                    failovers += 1
                    reply = try? await clientB.post(batch)
                }
                guard let reply, reply.status == 200, let seq = reply.response?.treeReceipt?.seq else {
                    return (acknowledged, index, failovers)
                }
                acknowledged = max(acknowledged ?? 0, seq)
            }
            return (acknowledged, batches.count, failovers)
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 200...1200)))
        let killedMidway = !finished.isSet
        let killed = await a.kill9()
        #expect(killed.signaled && killed.status == SIGKILL)
        let (acknowledged, delivered, failovers) = await feeder.value
        #expect(killedMidway, "the feeder finished before the kill")
        #expect(delivered == batches.count, "replica B did not take over")
        if killedMidway { #expect(failovers >= 1) }
        try await StoredLog.expectIntact(directory, chain, acknowledged: acknowledged)
        #expect(acknowledged == UInt64(chain.entries.count - 1))

        // The restarted replica serves the same log beside the other: every batch again (all duplicates), each
        // answered with a receipt of the whole tree by whichever replica took it.
        (a, clientA) = try await Self.start(directory, name: "a-again")
        var last: TreeReceipt?
        for (index, batch) in batches.enumerated() where index % 7 == 0 || index == batches.count - 1 {
            let reply = try await (index % 2 == 0 ? clientA : clientB).post(batch)
            #expect(reply.status == 200)
            #expect(reply.response?.results.allSatisfy { $0.status != .rejected } == true)
            last = reply.response?.treeReceipt ?? last
        }
        let receipt = try StoredLog.expectWholeChain(last, chain)
        try await StoredLog.expectIntact(directory, chain, acknowledged: receipt.seq)
        #expect(await a.terminate().status == 0)
        #expect(await b.terminate().status == 0)
    }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let state = Mutex(false)
    func set() { state.withLock { $0 = true } }
    var isSet: Bool { state.withLock { $0 } }
}
