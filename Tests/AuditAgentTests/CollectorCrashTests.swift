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

    @Test("SIGKILL while 16 logs send one-entry batches at once (group commits): each log intact, nothing acked lost")
    func killDuringGroupCommits() async throws {
        let directory = CollectorTempDir()
        let chains = (0..<16).map { _ in
            var chain = CollectorChain()
            chain.appendEvents(79)
            return chain
        }
        var acknowledged: [UInt64?] = Array(repeating: nil, count: chains.count)
        var next = Array(repeating: 0, count: chains.count)
        var killedMidway = 0
        for round in 0..<3 {
            let server = try await Self.start(
                database: directory.database,
                output: directory.path + "/collector-\(round).log"
            )
            let client = CollectorClient(port: server.port, token: nil)
            // Every log sends its entries one per batch from the first one not acknowledged, all logs at once.
            let feeder = Task { [next] () -> [(Int, UInt64?)] in
                await withTaskGroup(of: (Int, Int, UInt64?).self) { group in
                    for (index, chain) in chains.enumerated() {
                        group.addTask {
                            var seq = next[index]
                            var acked: UInt64?
                            while seq < chain.entries.count {
                                guard let reply = try? await client.post(chain.batch([seq])), reply.status == 200,
                                    let receipt = reply.response?.treeReceipt, receipt.seq >= UInt64(seq)
                                else { break }
                                acked = receipt.seq
                                seq += 1
                            }
                            return (index, seq, acked)
                        }
                    }
                    var reached = Array(repeating: (0, UInt64?.none), count: chains.count)
                    for await (index, seq, acked) in group { reached[index] = (seq, acked) }
                    return reached
                }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...1500)))
            _ = await server.kill9()
            let reached = await feeder.value
            if reached.contains(where: { $0.0 < chains[0].entries.count }) { killedMidway += 1 }
            for (index, chain) in chains.enumerated() {
                next[index] = reached[index].0
                if let acked = reached[index].1 { acknowledged[index] = max(acknowledged[index] ?? 0, acked) }
                try await StoredLog.expectIntact(directory, chain, acknowledged: acknowledged[index])
            }
        }
        #expect(killedMidway > 0, "no round was killed while batches were still being sent")
        let server = try await Self.start(database: directory.database, output: directory.path + "/last.log")
        defer { server.child.send(SIGKILL) }
        let client = CollectorClient(port: server.port, token: nil)
        for (index, chain) in chains.enumerated() {
            var last: TreeReceipt?
            for seq in min(next[index], chain.entries.count - 1)..<chain.entries.count {
                let reply = try await client.post(chain.batch([seq]))
                #expect(reply.status == 200)
                last = reply.response?.treeReceipt ?? last
            }
            try StoredLog.expectWholeChain(last, chain)
        }
    }
}
