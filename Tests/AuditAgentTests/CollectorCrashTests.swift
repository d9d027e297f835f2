import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Testing
import TestKit
import TransparencyLog

/// The built `auditd collector` killed with SIGKILL at random instants while it ingests (docs/COLLECTOR-API.md
/// section 1): the tree and the entries commit together, so after every crash the stored tree is exactly the
/// entries its head covers, and nothing the collector acknowledged is lost.
@Suite("Collector crash during ingest", .serialized)
struct CollectorCrashTests {
    /// Starts `auditd collector` on `database`.
    static func start(database: String, output: String) async throws -> ServerProcess {
        try await ServerProcess.start(
            ["collector", "--db", database, "--listen", "127.0.0.1:0"],
            outputPath: output
        )
    }

    @Test("SIGKILL mid-ingest, five times: the tree always equals the entries the head covers; nothing acked is lost")
    func killDuringIngest() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(5999)
        let batches = stride(from: 0, to: chain.entries.count, by: 150).map { start in
            chain.batch(Array(start..<min(start + 150, chain.entries.count)))
        }
        var acknowledged: UInt64 = 0
        var next = 0
        var killedMidway = 0
        for round in 0..<5 {
            let server = try await Self.start(
                database: directory.database,
                output: directory.path + "/collector-\(round).log"
            )
            let client = CollectorClient(port: server.port, token: nil)
            // Feed batches from the first one not acknowledged, and kill the collector at a random instant.
            let feeder = Task { [next] () -> (Int, UInt64) in
                var index = next
                var acked: UInt64 = 0
                while index < batches.count {
                    guard let reply = try? await client.post(batches[index]), reply.status == 200,
                        let seq = reply.response?.treeReceipt?.seq
                    else { break }
                    acked = seq
                    index += 1
                }
                return (index, acked)
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...900)))
            _ = await server.kill9()
            let (reached, acked) = await feeder.value
            next = reached
            acknowledged = max(acknowledged, acked)
            if reached < batches.count { killedMidway += 1 }

            // The database as the crash left it: the tree is exactly the entries up to the head, in order.
            try await StoredLog.expectIntact(directory, chain, acknowledged: acknowledged == 0 ? nil : acknowledged)
        }
        #expect(killedMidway > 0, "no round was killed while batches were still being sent")
        // A last run delivers the rest (the last batch again if nothing is left); the final tree holds every entry.
        let server = try await Self.start(database: directory.database, output: directory.path + "/last.log")
        defer { server.child.send(SIGKILL) }
        let client = CollectorClient(port: server.port, token: nil)
        var last: TreeReceipt?
        for batch in batches[min(next, batches.count - 1)...] {
            let reply = try await client.post(batch)
            #expect(reply.status == 200)
            last = reply.response?.treeReceipt ?? last
        }
        try StoredLog.expectWholeChain(last, chain)
    }
}
