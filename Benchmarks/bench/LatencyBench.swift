import AuditChain
import Foundation
import AuditStore

/// Durable single-event append latency, against the latency of the durable write underneath it.
enum LatencyBench {
    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let count = options.latencyCount
        let folder = try directory.subdirectory("latency")
        Summary.say("  file system of \(directory.path): \(directory.fileSystem)")

        let (log, storage) = try await EventFactory.sqliteLog(in: folder, name: "latency")
        let size = try EventFactory.serializedEntrySize()
        let reference = try SyncedFile(path: folder + "/fsync-reference.bin", size: size)
        let wal = WALHeader(path: folder + "/latency.sqlite-wal")
        // Interleaved, so that both see the same disk and the same neighbours.
        var index = 0
        func pair() async throws -> (append: Double, fsync: Double) {
            let event = EventFactory.event(index)
            index += 1
            let append = try await Timing.measureAsync { _ = try await log.append([event]) }
            return (append, try reference.writeAndSync())
        }
        // The first cycle of a new WAL file: each commit appends to the file (new blocks, a larger size to sync)
        // until a checkpoint lets the next commit write it again from its beginning; from then on commits overwrite
        // blocks the file already has, which is the state of a log that has been running. Timed and shown apart.
        let firstCycle = try wal.checkpointSequence()
        var growing: [(append: Double, fsync: Double)] = []
        while try wal.checkpointSequence() == firstCycle {
            guard growing.count < 20_000 else {
                throw BenchError("the WAL was not restarted within 20 000 appends (checkpoints are not running)")
            }
            growing.append(try await pair())
        }
        storage.reset()
        var samples: [Double] = []
        var fsyncSamples: [Double] = []
        samples.reserveCapacity(count)
        fsyncSamples.reserveCapacity(count)
        for _ in 0..<count {
            let (append, fsync) = try await pair()
            samples.append(append)
            fsyncSamples.append(fsync)
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
        let growingAppend = growing.map(\.append).sorted()
        let growingFsync = growing.map(\.fsync).sorted()
        Summary.say(
            "    before them, while the new WAL file grew (\(growing.count) appends, untimed by the target): append "
                + "p50 \(Timing.duration(Timing.percentile(growingAppend, 0.5))), "
                + "p99 \(Timing.duration(Timing.percentile(growingAppend, 0.99))); write+fsync "
                + "p50 \(Timing.duration(Timing.percentile(growingFsync, 0.5))), "
                + "p99 \(Timing.duration(Timing.percentile(growingFsync, 0.99)))"
        )
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

/// The header of a SQLite WAL file (sqlite.org/fileformat2.html#walformat): its checkpoint sequence number, bytes
/// 12-15 big-endian, changes each time a commit starts the file again from its beginning.
struct WALHeader {
    let path: String

    func checkpointSequence() throws -> UInt32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 32, 0) }
        guard read == 32 else { throw BenchError("\(path) has no WAL header (read \(read) bytes)") }
        return bytes[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
