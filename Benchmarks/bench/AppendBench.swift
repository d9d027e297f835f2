import AuditChain
import AuditQueue
import Foundation

/// Bulk append through `AuditLog.append` on SQLite: batched calls, and many concurrent single-event producers.
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
        let events = EventFactory.events(0..<count)
        let folder = try directory.subdirectory("append")

        let (batchedLog, batchedStorage) = try await EventFactory.sqliteLog(in: folder, name: "batched")
        batchedStorage.reset()
        let batch = options.appendBatch
        var cpu = ProcessStats.cpuSeconds
        let batchedSeconds = try await Timing.measureAsync {
            var start = 0
            while start < count {
                let end = min(count, start + batch)
                _ = try await batchedLog.append(Array(events[start..<end]))
                start = end
            }
        }
        summary.add(
            Figure(
                name: "append \(Timing.grouped(Double(count))) events, batches of \(batch)",
                value: Double(count) / batchedSeconds,
                unit: .rate,
                reference: rates.signTimesCores,
                referenceName: "sign×cores",
                target: .valueAtLeast(60_000)
            )
        )
        describe(batchedStorage.totals, wall: batchedSeconds, cpu: ProcessStats.cpuSeconds - cpu, events: count)

        let producers = options.producers
        try check(batchedLog, entries: batchedStorage.totals.entries)
        guard producers > 0 else { return }
        let (concurrentLog, concurrentStorage) = try await EventFactory.sqliteLog(in: folder, name: "concurrent")
        concurrentStorage.reset()
        cpu = ProcessStats.cpuSeconds
        let concurrentSeconds = try await Timing.measureAsync {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for producer in 0..<producers {
                    group.addTask {
                        for index in stride(from: producer, to: count, by: producers) {
                            _ = try await concurrentLog.append([events[index]])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        summary.add(
            Figure(
                name: "append \(Timing.grouped(Double(count))) events, \(producers) producers × 1 event",
                value: Double(count) / concurrentSeconds,
                unit: .rate,
                reference: rates.signTimesCores,
                referenceName: "sign×cores",
                target: .valueAtLeast(60_000)
            )
        )
        describe(concurrentStorage.totals, wall: concurrentSeconds, cpu: ProcessStats.cpuSeconds - cpu, events: count)
        let size = try EventFactory.serializedEntrySize()
        let fsync = try SyncedFile(path: folder + "/probe.bin", size: size).latencies(count: 100, warmUp: 10)
        let fsyncP50 = Timing.percentile(fsync, 0.5)
        Summary.say(
            "    bound: each producer has one event in flight, so a commit takes at most \(producers) events; "
                + "with one fsync per commit (p50 \(Timing.duration(fsyncP50)) here) the rate is at most "
                + "\(producers) / fsync p50 = \(Timing.rate(Double(producers) / fsyncP50))"
        )
        try check(concurrentLog, entries: concurrentStorage.totals.entries)
    }

    /// Prints where a run's time went, from the storage's per-transaction totals.
    static func describe(_ totals: TimedStorage.Totals, wall: Double, cpu: Double, events: Int) {
        guard totals.transactions > 0, wall > 0 else { return }
        func share(_ seconds: Double) -> String {
            String(format: "%@ (%.0f%%)", Timing.duration(seconds), 100 * seconds / wall)
        }
        let perCommit = Double(totals.entries) / Double(totals.transactions)
        Summary.say(
            "    \(totals.transactions) transactions, \(Timing.short(perCommit)) entries each "
                + "(\(totals.entries - events) system records); wall \(Timing.duration(wall)), "
                + "\(Timing.short(cpu / wall)) cores busy:"
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
    private static func check(_ log: AuditLog, entries: Int) throws {
        let size = try log.storage.size()
        guard size.count == entries + 1 else {
            throw BenchError("the log holds \(size.count) entries, expected \(entries + 1)")
        }
    }
}
