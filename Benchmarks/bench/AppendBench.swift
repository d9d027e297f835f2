import AuditChain
import AuditStore
import Foundation

/// Bulk append through `AuditLog.append` on SQLite: the whole set in one call (a bulk import, as
/// `auditctl emit --input` of a 100 000-line file does), batched calls, and many concurrent single-event producers.
enum AppendBench {
    static func run(
        options: BenchOptions,
        rates: PrimitiveRates,
        directory: BenchDirectory,
        summary: Summary
    )
        async throws
    {
        let count = options.appendEvents
        let folder = try directory.subdirectory("append")
        let target = Figure.Target.valueAtLeast(60_000)
        let setup = Setup(folder: folder, events: count, rates: rates, repeats: options.appendRepeats, summary: summary)
        let producers = options.producers
        for workload in AppendWorkload.all(
            events: EventFactory.events(0..<count),
            batch: options.appendBatch,
            producers: producers
        ) {
            // The producers figure is not the bulk figure (no target): it shows what group commit makes of
            // many small appends.
            try await setup.measure(
                workload.label,
                figure: workload.figure,
                target: workload.kind == .concurrent ? nil : target,
                workload.body
            )
        }
        guard producers > 0 else { return }
        let size = try EventFactory.serializedEntrySize()
        let fsync = try SyncedFile(path: folder + "/probe.bin", size: size).latencies(count: 100, warmUp: 10)
        let fsyncP50 = Timing.percentile(fsync, 0.5)
        Summary.say(
            "    bound: each producer has one event in flight, so a commit takes at most \(producers) events; "
                + "with one fsync per commit (p50 \(Timing.duration(fsyncP50)) here) the rate is at most "
                + "\(producers) / fsync p50 = \(Timing.rate(Double(producers) / fsyncP50))"
        )
    }

    /// What every append figure shares.
    private struct Setup {
        var folder: String
        var events: Int
        var rates: PrimitiveRates
        var repeats: Int
        var summary: Summary

        /// Appends the events to a new log with `body`, `repeats` times, says where each run's time went, checks each
        /// log holds every entry, and adds the figure of the best run.
        ///
        /// The best, because other work on the shared cores only ever lowers a rate (the primitive references are
        /// the best of four windows for the same reason); every run is printed.
        func measure(
            _ label: String,
            figure name: String,
            target: Figure.Target?,
            _ body: (AuditLog) async throws -> Void
        ) async throws {
            var best = Double.infinity
            for run in 1...repeats {
                let (log, storage) = try await EventFactory.sqliteLog(
                    in: folder,
                    name: label.replacingOccurrences(of: " ", with: "-") + "-\(run)"
                )
                storage.reset()
                let cpu = ProcessStats.cpuSeconds
                let seconds = try await Timing.measureAsync { try await body(log) }
                Summary.say("    run \(run) of \(repeats): \(Timing.rate(Double(events) / seconds))")
                AppendBench.describe(
                    storage.totals,
                    wall: seconds,
                    cpu: ProcessStats.cpuSeconds - cpu,
                    events: events,
                    cores: rates.cores
                )
                try AppendBench.check(log, entries: storage.totals.entries)
                best = min(best, seconds)
            }
            summary.add(
                Figure(
                    name: name,
                    value: Double(events) / best,
                    unit: .rate,
                    reference: rates.signTimesCores,
                    referenceName: "sign×cores",
                    target: target
                )
            )
        }
    }

    /// Prints where a run's time went, from the storage's per-transaction totals.
    static func describe(_ totals: TimedStorage.Totals, wall: Double, cpu: Double, events: Int, cores: Int) {
        guard totals.transactions > 0, wall > 0 else { return }
        func share(_ seconds: Double) -> String {
            String(format: "%@ (%.0f%%)", Timing.duration(seconds), 100 * seconds / wall)
        }
        let perCommit = Double(totals.entries) / Double(totals.transactions)
        let cpuPerEntry = cpu / Double(events)
        Summary.say(
            "    \(totals.transactions) transactions, \(Timing.short(perCommit)) entries each "
                + "(\(totals.entries - events) system records); wall \(Timing.duration(wall)), "
                + "\(Timing.short(cpu / wall)) cores busy, \(Timing.duration(cpuPerEntry)) of CPU per event "
                + "(all \(cores) cores busy with no wait would make \(Timing.rate(Double(cores) / cpuPerEntry))):"
        )
        Summary.say(
            "    sealing in the transaction \(share(totals.bodySeconds)) (inserting signed chunks meanwhile "
                + "\(Timing.duration(totals.sinkSeconds))), "
                + "SQLite around it (begin, head read, last inserts, commit+fsync) \(share(totals.storageSeconds)), "
                + "outside the transaction (validation, nonces, group commit, waits) "
                + share(max(0, wall - totals.appendSeconds))
        )
    }

    /// Checks the log holds the genesis and every entry the transactions wrote.
    static func check(_ log: AuditLog, entries: Int) throws {
        let size = try log.storage.size()
        guard size.count == entries + 1 else {
            throw BenchError("the log holds \(size.count) entries, expected \(entries + 1)")
        }
    }
}
