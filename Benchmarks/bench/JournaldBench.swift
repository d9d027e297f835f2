import AuditChain
import AuditStore
import Foundation

/// Issue 32's peer: the log's bulk append and full verification against journald's sealed writer and verifier
/// (``JournaldPeer``) on the same number of entries, alternating, so that each ratio is measured in one run on
/// the same machine at nearly the same moments. Each figure is the pair (journald's run and ours next to it) with the
/// median ratio of the `--repeat` pairs; every pair is printed.
///
/// The logs are in format version 2 (what `auditctl init` makes) unless `AUDIT_BENCH_FORMAT_VERSION` says
/// otherwise. When journald's writer cannot run here, the section says why and the summary lists it as skipped.
enum JournaldBench {
    /// The issue's targets: our rate / journald's sealed write rate, per way of appending.
    static func target(_ kind: AppendWorkload.Kind) -> Double {
        switch kind {
        case .oneCall: 2
        case .batched: 1.5
        case .concurrent: 1
        }
    }

    static func run(
        options: BenchOptions,
        rates: PrimitiveRates,
        directory: BenchDirectory,
        summary: Summary
    )
        async throws
    {
        let count = options.appendEvents
        let folder = try directory.subdirectory("journald")
        let peer: JournaldPeer
        do {
            peer = try JournaldPeer.prepare(folder: folder, entries: count)
        } catch {
            Summary.say("  SKIPPED: journald's sealed writer cannot run here: \(error)")
            summary.skip("journald comparison (append and verify)", because: "\(error)")
            return
        }
        let version = EventFactory.configuration(formatVersion: FormatConstants.version2).formatVersion
        Summary.say(
            "  journald: \(peer.remote) --seal=yes from an export stream of \(Timing.grouped(Double(count))) entries "
                + "(\(peer.fieldBytes) bytes of fields each: MESSAGE is the event's canonical JSON); "
                + "journalctl --verify --verify-key on its file. Our logs: format version \(version)"
        )
        let workloads = AppendWorkload.all(
            events: EventFactory.events(0..<count),
            batch: options.appendBatch,
            producers: options.producers
        )
        // Each pair's seconds (journald's, ours): the load of the shared host drifts between pairs, not within one.
        var pairs = [AppendWorkload.Kind: [Pair]]()
        var verifyPairs: [Pair] = []
        for run in 1...options.appendRepeats {
            var oneCallLog: AuditLog?
            for workload in workloads {
                let journald = try peer.write()
                let (log, storage) = try await EventFactory.sqliteLog(
                    in: folder,
                    name: workload.label.replacingOccurrences(of: " ", with: "-") + "-\(run)",
                    formatVersion: FormatConstants.version2
                )
                storage.reset()
                let cpu = ProcessStats.cpuSeconds
                let seconds = try await Timing.measureAsync { try await workload.body(log) }
                let ourCPU = ProcessStats.cpuSeconds - cpu
                try AppendBench.check(log, entries: storage.totals.entries)
                pairs[workload.kind, default: []].append(Pair(journald: journald.seconds, ours: seconds))
                if workload.kind == .oneCall { oneCallLog = log }
                Summary.say(
                    "    run \(run), \(workload.label): journald \(rate(count, journald)), "
                        + "ours \(rate(count, Run(seconds: seconds, cpuSeconds: ourCPU))): ratio "
                        + String(format: "%.2f", journald.seconds / seconds)
                )
            }
            guard let log = oneCallLog else { continue }
            let journald = try peer.verify()
            let ourRun = try verify(log, cores: rates.cores)
            verifyPairs.append(Pair(journald: journald.seconds, ours: ourRun.seconds))
            Summary.say(
                "    run \(run), verify: journalctl --verify \(rate(count, journald)), ours (full, \(rates.cores) "
                    + "threads) \(rate(count, ourRun)): ratio "
                    + String(format: "%.2f", journald.seconds / ourRun.seconds)
            )
        }
        for workload in workloads {
            guard let pair = Pair.median(pairs[workload.kind] ?? []) else { continue }
            summary.add(
                Figure(
                    name: workload.figure + " vs journald",
                    value: Double(count) / pair.ours,
                    unit: .rate,
                    reference: Double(count) / pair.journald,
                    referenceName: "journald sealed write",
                    target: .ratioAtLeast(target(workload.kind))
                )
            )
        }
        if let pair = Pair.median(verifyPairs) {
            summary.add(
                Figure(
                    name: "verify full of \(Timing.grouped(Double(count))) entries vs journalctl --verify",
                    value: Double(count) / pair.ours,
                    unit: .rate,
                    reference: Double(count) / pair.journald,
                    referenceName: "journalctl --verify",
                    target: .ratioAtLeast(4)
                )
            )
        }
    }

    /// One alternation: journald's seconds and ours for the same entries.
    struct Pair {
        var journald: Double
        var ours: Double

        /// The pair whose ratio (journald's time / ours) is the median, the lower of the two middle ones for an even
        /// count (a figure is the pair's two rates, measured next to each other).
        static func median(_ pairs: [Pair]) -> Pair? {
            let sorted = pairs.sorted { $0.journald / $0.ours < $1.journald / $1.ours }
            return sorted.isEmpty ? nil : sorted[(sorted.count - 1) / 2]
        }
    }

    typealias Run = JournaldPeer.Run

    /// `count` entries in a run's time: the rate, and the CPU per entry.
    private static func rate(_ count: Int, _ run: Run) -> String {
        "\(Timing.rate(Double(count) / run.seconds)) (\(Timing.duration(run.cpuSeconds / Double(count))) CPU/entry)"
    }

    /// Full verification of `log` as `auditctl verify` runs it (its genesis key trusted, pages read ahead, every
    /// signature checked on `cores` threads), in this process; throws unless the log verifies.
    private static func verify(_ log: AuditLog, cores: Int) throws -> Run {
        var options = ChainVerifier.Options(trustedKeys: [try log.activeSigningKey().publicKey])
        options.parallelism = cores
        let cpu = ProcessStats.cpuSeconds
        var report: VerificationReport?
        let seconds = try Timing.measure { report = try log.storage.verify(options: options) }
        guard let report, report.isClean else {
            throw BenchError("the log did not verify: \(report?.problems.first.map { "\($0)" } ?? "no report")")
        }
        return Run(seconds: seconds, cpuSeconds: ProcessStats.cpuSeconds - cpu)
    }
}
