import AuditChain
import AuditStore
import Foundation

/// Issue 32's peer: the log's bulk append and full verification against journald's sealed writer and verifier
/// (``JournaldPeer``) on the same number of entries, alternating, so that each ratio is measured in one run on
/// the same machine at nearly the same moments.
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

    static func run(options: BenchOptions, rates: PrimitiveRates, directory: BenchDirectory, summary: Summary)
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
        var journaldWrites: [Double] = []
        var ours = [AppendWorkload.Kind: Double]()
        var journaldVerifies: [Double] = []
        var ourVerifies: [Double] = []
        for run in 1...options.appendRepeats {
            var oneCallLog: AuditLog?
            for workload in workloads {
                let journald = try peer.write()
                journaldWrites.append(journald.seconds)
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
                ours[workload.kind] = min(ours[workload.kind] ?? .infinity, seconds)
                if workload.kind == .oneCall { oneCallLog = log }
                Summary.say(
                    "    run \(run), \(workload.label): journald \(rate(count, journald)), "
                        + "ours \(rate(count, Run(seconds: seconds, cpuSeconds: ourCPU))): ratio "
                        + String(format: "%.2f", journald.seconds / seconds)
                )
            }
            guard let log = oneCallLog else { continue }
            let journald = try peer.verify()
            journaldVerifies.append(journald.seconds)
            let ourRun = try verify(log, cores: rates.cores)
            ourVerifies.append(ourRun.seconds)
            Summary.say(
                "    run \(run), verify: journalctl --verify \(rate(count, journald)), ours (full, \(rates.cores) "
                    + "threads) \(rate(count, ourRun)): ratio " + String(format: "%.2f", journald.seconds / ourRun.seconds)
            )
        }
        let journaldRate = Double(count) / (journaldWrites.min() ?? .infinity)
        for workload in workloads {
            guard let best = ours[workload.kind] else { continue }
            summary.add(
                Figure(
                    name: workload.figure + " vs journald",
                    value: Double(count) / best,
                    unit: .rate,
                    reference: journaldRate,
                    referenceName: "journald sealed write",
                    target: .ratioAtLeast(target(workload.kind))
                )
            )
        }
        if let journald = journaldVerifies.min(), let best = ourVerifies.min() {
            summary.add(
                Figure(
                    name: "verify full of \(Timing.grouped(Double(count))) entries vs journalctl --verify",
                    value: Double(count) / best,
                    unit: .rate,
                    reference: Double(count) / journald,
                    referenceName: "journalctl --verify",
                    target: .ratioAtLeast(4)
                )
            )
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
