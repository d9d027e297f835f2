import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Testing
import TestKit
import TransparencyLog

/// The built `auditd collector` killed with SIGKILL at random instants while it ingests (docs/TRANSPARENCY.md
/// section 6): the tree and the entries commit together, so after every crash the stored tree is exactly the
/// entries its head covers, and nothing the collector acknowledged is lost.
@Suite("Collector crash during ingest", .serialized)
struct CollectorCrashTests {
    /// Starts `auditd collector` on `database`; returns the process and the port it reports.
    static func start(database: String, output: String) async throws -> (Process, Int) {
        guard FileManager.default.createFile(atPath: output, contents: nil) else {
            throw CollectorError(.invalidConfiguration, "cannot create \(output)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: AgentProducts.path("auditd"))
        process.arguments = ["collector", "--db", database, "--listen", "127.0.0.1:0"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AUDITD_") }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
        var port: Int?
        _ = await pollUntil(within: .seconds(60)) {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on 127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            return port != nil || !process.isRunning
        }
        guard let port else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CollectorError(.invalidConfiguration, "the collector did not start: \(output)")
        }
        return (process, port)
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
            let (process, port) = try await Self.start(
                database: directory.database,
                output: directory.path + "/collector-\(round).log"
            )
            let client = CollectorClient(port: port, token: nil)
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
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let (reached, acked) = await feeder.value
            next = reached
            acknowledged = max(acknowledged, acked)
            if reached < batches.count { killedMidway += 1 }

            // The database as the crash left it: the tree is exactly the entries up to the head, in order.
            let store = try CollectorStore(path: directory.database)
            if let head = try await store.head(logId: chain.logId) {
                #expect(head.seq >= acknowledged, "round \(round): acknowledged \(acknowledged), head \(head.seq)")
                let held = try await store.entries(logId: chain.logId).filter { $0.seq <= head.seq }
                #expect(held.map(\.seq) == Array(0...head.seq), "round \(round)")
                let tree = try await store.treeHead(logId: chain.logId)
                #expect(tree.size == head.seq + 1, "round \(round)")
                #expect(tree.root == MerkleTree(leaves: held.map(\.bytes)).root(), "round \(round)")
            } else {
                #expect(acknowledged == 0)
            }
        }
        #expect(killedMidway > 0, "no round was killed while batches were still being sent")
        // A last run delivers the rest (the last batch again if nothing is left); the final tree holds every entry.
        let (process, port) = try await Self.start(database: directory.database, output: directory.path + "/last.log")
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let client = CollectorClient(port: port, token: nil)
        var last: TreeReceipt?
        for batch in batches[min(next, batches.count - 1)...] {
            let reply = try await client.post(batch)
            #expect(reply.status == 200)
            last = reply.response?.treeReceipt ?? last
        }
        let receipt = try #require(last)
        #expect(receipt.seq == UInt64(chain.entries.count - 1))
        let checkpoint = try Checkpoint(parsing: try SignedNote(parsing: Array(receipt.checkpoint.utf8)).text)
        #expect(checkpoint.size == UInt64(chain.entries.count))
        #expect(checkpoint.rootHash == MerkleTree(leaves: chain.entries.map(\.serialized)).root())
    }
}
