import AuditAgent
import AuditChain
@testable import AuditCollector
import AuditWire
import Foundation
import FuzzSupport
import Testing

/// The seeded mutation harness on the agent's configuration file and on the collector's ingest decision
/// (Tests/FuzzSupport/Fuzz.swift): a configuration or an error, a plan or refusals; never a trap.
@Suite("Parser fuzzing: agent configuration, collector ingest", .serialized)
struct ConfigFuzzTests {
    @Test("agent configuration files: a configuration or an error")
    func agentConfiguration() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auditd.json").path
        Fuzz.run("agent-config", seeds: Fuzz.corpus("agent-config"), iterations: 3_000) { input in
            guard FileManager.default.createFile(atPath: path, contents: Data(input)) else { return }
            _ = try? AgentConfiguration.resolve(configFile: path, environment: [:], flags: [:])
        }
    }

    @Test("collector ingest: a mutated batch is parsed and decided entry by entry; every entry gets one result")
    func collectorIngest() {
        var mismatched = 0
        Fuzz.run("collector-ingest", seeds: Fuzz.corpus("sync-batch"), iterations: 1_500) { input in
            guard let value = try? JSONValue(parsing: input), let batch = try? SyncBatch(json: value) else { return }
            let incoming = IncomingEntry.prepare(batch.entries, knownKeys: [:], held: [:])
            let plan = IngestDecider.plan(incoming, logId: batch.logId, trusted: [:], keys: [:], held: [:])
            if plan.results.count != batch.entries.count { mismatched += 1 }
            for result in plan.results where result.status != .rejected {
                _ = result.seq
            }
        }
        #expect(mismatched == 0)
    }
}
