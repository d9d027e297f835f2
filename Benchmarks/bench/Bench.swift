import Foundation

/// Benchmarks, run in release mode: `swift run -c release bench` (see Benchmarks/README.md).
@main
struct Bench {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            if arguments.first == "alloc-probe" {
                try await AllocProbe.main(Array(arguments.dropFirst()))
                return
            }
            if arguments.first == "agent-child" {
                try await ClientBench.agentChild(Array(arguments.dropFirst()))
                return
            }
            if arguments.first == "verify-child" {
                try VerifyChild.main(Array(arguments.dropFirst()))
                return
            }
            if arguments.contains("--help") || arguments.contains("-h") {
                Summary.say(BenchOptions.usage)
                return
            }
            try await run(try BenchOptions.parse(arguments))
        } catch {
            FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: BenchOptions) async throws {
        #if DEBUG
        Summary.say("WARNING: a debug build; measure with `swift run -c release bench`")
        #endif
        let directory = try BenchDirectory(base: options.baseDirectory)
        defer {
            if options.keep {
                Summary.say("kept \(directory.path)")
            } else {
                directory.remove()
            }
        }
        let sections = options.sections.map(\.rawValue).joined(separator: ", ")
        Summary.say(
            "bench: \(sections)\(options.quick ? " (quick)" : ""); "
                + "directory \(directory.path) (\(directory.fileSystem)); load average \(ProcessStats.loadAverage)"
        )
        let summary = Summary()
        let started = ContinuousClock.now

        Summary.heading("Primitive references (swift-crypto Curve25519.Signing)")
        let rates = try PrimitiveRates.measure(seconds: options.primitiveSeconds)
        rates.report(into: summary)

        for section in options.sections {
            switch section {
            case .primitives:
                break
            case .append:
                Summary.heading("Bulk append: AuditLog.append on SQLiteLogStorage")
                try await AppendBench.run(options: options, rates: rates, directory: directory, summary: summary)
            case .journald:
                Summary.heading("journald: our append and verify vs systemd-journal-remote --seal=yes, alternating")
                try await JournaldBench.run(options: options, rates: rates, directory: directory, summary: summary)
            case .epoch:
                Summary.heading("Epochs: the end of an epoch, and an idle agent (format version 2)")
                try await EpochBench.run(options: options, directory: directory, summary: summary)
            case .erasure:
                Summary.heading("Erasure: one subject's keys destroyed on a large log (format version 2, subject keys)")
                try await ErasureBench.run(options: options, directory: directory, summary: summary)
            case .latency:
                Summary.heading("Durable single-event append latency")
                try await LatencyBench.run(options: options, directory: directory, summary: summary)
            case .verify:
                Summary.heading("Verify: ChainVerifier streaming a SQLite log")
                try await VerifyBench.run(options: options, rates: rates, directory: directory, summary: summary)
            case .log:
                Summary.heading("Log: `auditctl log --decrypt` over a large SQLite log, in a child process")
                try await LogBench.run(options: options, rates: rates, directory: directory, summary: summary)
            case .breakdown:
                try await BreakdownBench.run(options: options, rates: rates, directory: directory)
            case .sync:
                Summary.heading("Sync: SyncEngine over HTTP to an in-process collector (verification on)")
                try await SyncBench.run(options: options, directory: directory, summary: summary)
            case .recovery:
                Summary.heading("Recovery: a burst of whole-request 400s, then the collector returns (real run loop)")
                try await RecoveryBench.run(options: options, directory: directory, summary: summary)
            case .fleet:
                Summary.heading("Fleet: collector ingest over HTTP on SQLite and PostgreSQL, one and two replicas")
                try await FleetBench.run(options: options, rates: rates, directory: directory, summary: summary)
            case .simulation:
                Summary.heading("Fleet simulation: devices at random intervals, one event a batch, receipts checked")
                try await FleetSimulation.run(options: options, directory: directory, summary: summary)
            case .transparency:
                Summary.heading("Transparency: the collector's Merkle tree (MerkleNodes), 1 M leaves")
                try TransparencyBench.run(options: options, rates: rates, summary: summary)
                Summary.heading("Transparency: what the tree and the checkpoint receipt add to collector ingest")
                try await TransparencyIngestBench.run(
                    options: options,
                    rates: rates,
                    directory: directory,
                    summary: summary
                )
            case .tls:
                Summary.heading(
                    "TLS: the same batches to in-process collectors over HTTP and HTTPS (HTTPSyncTransport)"
                )
                try await TLSBench.run(options: options, directory: directory, summary: summary)
            case .client:
                Summary.heading("Client: AuditClient into a running agent vs auditctl emit of the same events")
                try await ClientBench.run(options: options, directory: directory, summary: summary)
            case .ui:
                Summary.heading("UI: the collector's pages at fleet scale, over HTTP (SQLite)")
                try await UIBench.run(options: options, directory: directory, summary: summary)
            }
        }
        summary.printTable()
        Summary.say(
            "total time \(Timing.duration(Timing.seconds(ContinuousClock.now - started))); "
                + "load average \(ProcessStats.loadAverage) (other work on the \(rates.cores) cores lowers every rate)"
        )
    }
}
