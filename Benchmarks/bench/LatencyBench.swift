import AuditChain
import AuditQueue
import Foundation

/// Durable single-event append latency, against the latency of the durable write underneath it.
enum LatencyBench {
    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let count = options.latencyCount
        let warmUp = max(20, count / 20)
        let folder = try directory.subdirectory("latency")
        Summary.say("  file system of \(directory.path): \(directory.fileSystem)")

        let (log, storage) = try await EventFactory.sqliteLog(in: folder, name: "latency")
        let size = try EventFactory.serializedEntrySize()
        let reference = try SyncedFile(path: folder + "/fsync-reference.bin", size: size)
        for index in 0..<warmUp {
            _ = try await log.append([EventFactory.event(index)])
            _ = try reference.writeAndSync()
        }
        storage.reset()
        // Interleaved, so that both see the same disk and the same neighbours.
        var samples: [Double] = []
        var fsyncSamples: [Double] = []
        samples.reserveCapacity(count)
        fsyncSamples.reserveCapacity(count)
        for index in 0..<count {
            let event = EventFactory.event(warmUp + index)
            samples.append(try await Timing.measureAsync { _ = try await log.append([event]) })
            fsyncSamples.append(try reference.writeAndSync())
        }
        let append = samples.sorted()
        let fsync = fsyncSamples.sorted()
        let totals = storage.totals
        guard totals.transactions == count else {
            throw BenchError("expected one transaction per append, got \(totals.transactions)")
        }

        let appendP99 = Timing.percentile(append, 0.99)
        let fsyncP99 = Timing.percentile(fsync, 0.99)
        summary.add(
            Figure(
                name: "write+fsync \(size) B, p50",
                value: Timing.percentile(fsync, 0.5),
                unit: .seconds
            )
        )
        summary.add(
            Figure(
                name: "write+fsync \(size) B, p99",
                value: fsyncP99,
                unit: .seconds
            )
        )
        summary.add(
            Figure(
                name: "append 1 event (durable), p50",
                value: Timing.percentile(append, 0.5),
                unit: .seconds,
                reference: Timing.percentile(fsync, 0.5),
                referenceName: "fsync p50",
                target: nil
            )
        )
        summary.add(
            Figure(
                name: "append 1 event (durable), p99",
                value: appendP99,
                unit: .seconds,
                reference: fsyncP99,
                referenceName: "fsync p99",
                target: .ratioAtMost(2)
            )
        )
        Summary.say(
            "    \(count) sequential appends, each followed by one write+fsync: append max "
                + "\(Timing.duration(append.last ?? .nan)), mean \(Timing.duration(append.reduce(0, +) / Double(count))); "
                + "write+fsync max \(Timing.duration(fsync.last ?? .nan))"
        )
        describe(wall: samples, transactions: totals.samples)
    }

    /// Prints p50 and p99 of each part of the appends: sealing, the SQLite transaction around it, and the rest.
    static func describe(wall: [Double], transactions: [(append: Double, body: Double)]) {
        let parts: [(String, [Double])] = [
            ("sealing (in the transaction)", transactions.map(\.body)),
            ("SQLite (begin, head read, insert, commit+fsync)", transactions.map { $0.append - $0.body }),
            ("outside (validation, nonce, group commit, thread hops)", zip(wall, transactions).map { $0 - $1.append }),
        ]
        for (name, values) in parts {
            let sorted = values.sorted()
            Summary.say(
                "    \(name): p50 \(Timing.duration(Timing.percentile(sorted, 0.5))), "
                    + "p99 \(Timing.duration(Timing.percentile(sorted, 0.99))), max \(Timing.duration(sorted.last ?? .nan))"
            )
        }
    }
}
